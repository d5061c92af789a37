package org.crossbench.servlet;

import java.io.IOException;
import javax.servlet.annotation.WebServlet;
import javax.servlet.http.HttpServlet;
import javax.servlet.http.HttpServletRequest;
import javax.servlet.http.HttpServletResponse;

/** {@code /now}: answers at once; the head-of-line probe of seed 000 (its handler C). */
@WebServlet(urlPatterns = "/now")
public class NowServlet extends HttpServlet {
    private static final long serialVersionUID = 1L;

    @Override
    protected void doGet(HttpServletRequest request, HttpServletResponse response) throws IOException {
        TextResponse.write(response, TextResponse.OK);
    }
}
