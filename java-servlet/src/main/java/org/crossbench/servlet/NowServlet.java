package org.crossbench.servlet;

import javax.servlet.annotation.WebServlet;

/** {@code /now}: answers at once; the head-of-line probe of seed 000 (its handler C). */
@WebServlet(urlPatterns = "/now")
public class NowServlet extends FixedTextServlet {
    private static final long serialVersionUID = 1L;

    public NowServlet() {
        super(TextResponse.OK);
    }
}
