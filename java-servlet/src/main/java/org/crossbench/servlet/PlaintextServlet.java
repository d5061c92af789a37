package org.crossbench.servlet;

import javax.servlet.annotation.WebServlet;

/** {@code /plaintext}: TechEmpower's plaintext test (measured with 16 requests pipelined per connection). */
@WebServlet(urlPatterns = "/plaintext")
public class PlaintextServlet extends FixedTextServlet {
    private static final long serialVersionUID = 1L;

    static final byte[] BODY = TextResponse.bytes("Hello, World!");

    public PlaintextServlet() {
        super(BODY);
    }
}
