package org.crossbench.servlet;

import java.io.IOException;
import javax.servlet.annotation.WebServlet;
import javax.servlet.http.HttpServlet;
import javax.servlet.http.HttpServletRequest;
import javax.servlet.http.HttpServletResponse;

/** {@code /delay/sync?ms=N}: holds the request thread for N ms with Thread.sleep (seed 002's servlet). */
@WebServlet(urlPatterns = "/delay/sync")
public class SyncDelayServlet extends HttpServlet {
    private static final long serialVersionUID = 1L;

    @Override
    protected void doGet(HttpServletRequest request, HttpServletResponse response) throws IOException {
        int ms = DelayParameter.fromRequest(request, response);
        if (ms < 0) {
            return;
        }
        try {
            Thread.sleep(ms);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            response.sendError(HttpServletResponse.SC_SERVICE_UNAVAILABLE);
            return;
        }
        TextResponse.write(response, TextResponse.OK);
    }
}
