package org.crossbench.servlet;

import java.io.IOException;
import javax.servlet.http.HttpServlet;
import javax.servlet.http.HttpServletRequest;
import javax.servlet.http.HttpServletResponse;

/** A GET endpoint whose answer is always the same text (/hello, /now, /plaintext): the bytes made once. */
abstract class FixedTextServlet extends HttpServlet {
    private static final long serialVersionUID = 1L;

    private final byte[] body;

    FixedTextServlet(byte[] body) {
        this.body = body;
    }

    @Override
    protected void doGet(HttpServletRequest request, HttpServletResponse response) throws IOException {
        TextResponse.write(response, body);
    }
}
