package org.crossbench.servlet;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import javax.servlet.ServletResponse;
import javax.servlet.http.HttpServletResponse;

/** Writes the plain-text answers of the contract: exact bytes, exact Content-Length, UTF-8 declared. */
public final class TextResponse {

    public static final String CONTENT_TYPE = "text/plain; charset=UTF-8";
    public static final byte[] OK = bytes("OK");
    public static final byte[] HELLO = bytes("Hello, world");

    private TextResponse() {
    }

    public static byte[] bytes(String text) {
        return text.getBytes(StandardCharsets.UTF_8);
    }

    public static void write(ServletResponse response, byte[] body) throws IOException {
        response.setContentType(CONTENT_TYPE);
        response.setContentLength(body.length);
        response.getOutputStream().write(body);
    }

    /** A 4xx answer whose body says what was wrong, in the same shape on both servers. */
    public static void error(HttpServletResponse response, int status, String message) throws IOException {
        response.setStatus(status);
        write(response, bytes(message + "\n"));
    }
}
