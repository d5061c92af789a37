package org.crossbench.servlet;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

class DelaySchedulerTest {

    @Test
    void oneDaemonThreadCompletesManyOverlappingDelays() throws InterruptedException {
        ScheduledExecutorService scheduler = DelayScheduler.newScheduler();
        try {
            int tasks = 500;
            CountDownLatch done = new CountDownLatch(tasks);
            Set<String> threads = ConcurrentHashMap.newKeySet();
            long start = System.nanoTime();
            for (int i = 0; i < tasks; i++) {
                scheduler.schedule(() -> {
                    threads.add(Thread.currentThread().getName() + "/" + Thread.currentThread().isDaemon());
                    done.countDown();
                }, 200, TimeUnit.MILLISECONDS);
            }
            assertTrue(done.await(5, TimeUnit.SECONDS), "all delays completed");
            long elapsedMs = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - start);
            // 500 overlapping 200 ms delays finish together, not one after another.
            assertTrue(elapsedMs >= 200 && elapsedMs < 1000, "elapsed " + elapsedMs + " ms");
            assertEquals(Set.of(DelayScheduler.THREAD_NAME + "/true"), threads);
        } finally {
            scheduler.shutdownNow();
        }
    }
}
