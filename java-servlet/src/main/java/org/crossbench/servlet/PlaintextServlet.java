package org.crossbench.servlet;

import java.io.IOException;
import javax.servlet.annotation.WebServlet;
import javax.servlet.http.HttpServlet;
import javax.servlet.http.HttpServletRequest;
import javax.servlet.http.HttpServletResponse;

/** {@code /plaintext}: TechEmpower's plaintext test (measured with 16 requests pipelined per connection). */
@WebServlet(urlPatterns = "/plaintext")
public class PlaintextServlet extends HttpServlet {
    private static final long serialVersionUID = 1L;

    static final byte[] BODY = TextResponse.bytes("Hello, World!");

    @Override
    protected void doGet(HttpServletRequest request, HttpServletResponse response) throws IOException {
        TextResponse.write(response, BODY);
    }
}
