package org.crossbench.servlet;

import java.io.IOException;
import java.util.concurrent.TimeUnit;
import javax.servlet.AsyncContext;
import javax.servlet.annotation.WebServlet;
import javax.servlet.http.HttpServlet;
import javax.servlet.http.HttpServletRequest;
import javax.servlet.http.HttpServletResponse;

/**
 * {@code /delay/async?ms=N}: waits N ms without holding a thread. The request thread returns to the pool at
 * once; the shared {@link DelayScheduler} completes the AsyncContext when the delay is over.
 */
@WebServlet(urlPatterns = "/delay/async", asyncSupported = true)
public class AsyncDelayServlet extends HttpServlet {
    private static final long serialVersionUID = 1L;

    /** Longer than the largest delay, so the container never times a legal request out. */
    static final long ASYNC_TIMEOUT_MS = 2L * DelayParameter.MAX_MS;

    @Override
    protected void doGet(HttpServletRequest request, HttpServletResponse response) throws IOException {
        int ms = DelayParameter.fromRequest(request, response);
        if (ms < 0) {
            return;
        }
        AsyncContext async = request.startAsync();
        async.setTimeout(ASYNC_TIMEOUT_MS);
        DelayScheduler.of(getServletContext()).schedule(() -> finish(async), ms, TimeUnit.MILLISECONDS);
    }

    private static void finish(AsyncContext async) {
        try {
            TextResponse.write(async.getResponse(), TextResponse.OK);
        } catch (IOException | IllegalStateException e) {
            // The client went away or the container timed the request out; nothing left to answer.
        } finally {
            try {
                async.complete();
            } catch (IllegalStateException alreadyCompleted) {
                // completed by the container's timeout
            }
        }
    }
}
