package org.crossbench.servlet;

import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledThreadPoolExecutor;
import javax.servlet.ServletContext;
import javax.servlet.ServletContextEvent;
import javax.servlet.ServletContextListener;
import javax.servlet.annotation.WebListener;

/**
 * The one scheduler that completes every {@code /delay/async} request: a single daemon thread, whatever the load,
 * which is the Java counterpart of Tornado's one event loop timer queue.
 */
@WebListener
public class DelayScheduler implements ServletContextListener {

    static final String ATTRIBUTE = DelayScheduler.class.getName();
    static final String THREAD_NAME = "crossbench-delay-scheduler";

    @Override
    public void contextInitialized(ServletContextEvent event) {
        event.getServletContext().setAttribute(ATTRIBUTE, newScheduler());
    }

    @Override
    public void contextDestroyed(ServletContextEvent event) {
        ScheduledExecutorService scheduler = of(event.getServletContext());
        scheduler.shutdownNow();
        event.getServletContext().removeAttribute(ATTRIBUTE);
    }

    static ScheduledExecutorService newScheduler() {
        ScheduledThreadPoolExecutor scheduler = new ScheduledThreadPoolExecutor(1, runnable -> {
            Thread thread = new Thread(runnable, THREAD_NAME);
            thread.setDaemon(true);
            return thread;
        });
        // Cancelled tasks leave the queue at once rather than at their deadline.
        scheduler.setRemoveOnCancelPolicy(true);
        return scheduler;
    }

    static ScheduledExecutorService of(ServletContext context) {
        ScheduledExecutorService scheduler = (ScheduledExecutorService) context.getAttribute(ATTRIBUTE);
        if (scheduler == null) {
            throw new IllegalStateException("DelayScheduler not initialised");
        }
        return scheduler;
    }
}
