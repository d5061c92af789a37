package org.crossbench.servlet;

import javax.servlet.annotation.WebServlet;

/** {@code /hello}: plaintext hello world (seeds 000 and 001). */
@WebServlet(urlPatterns = "/hello")
public class HelloServlet extends FixedTextServlet {
    private static final long serialVersionUID = 1L;

    public HelloServlet() {
        super(TextResponse.HELLO);
    }
}
