package org.crossbench.servlet;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import javax.servlet.annotation.WebServlet;
import javax.servlet.http.HttpServlet;
import javax.servlet.http.HttpServletRequest;
import javax.servlet.http.HttpServletResponse;

/**
 * {@code /json}: TechEmpower's JSON test. Each request makes a new message object and serialises it; nothing is
 * computed once and reused (their rule), and the serialisation is the WAR's own, as the database endpoints'.
 */
@WebServlet(urlPatterns = "/json")
public class JsonServlet extends HttpServlet {
    private static final long serialVersionUID = 1L;

    static final String CONTENT_TYPE = "application/json";

    /** The object TechEmpower's test asks for: one property, {@code message}. */
    static final class Message {
        final String message;

        Message(String message) {
            this.message = message;
        }

        String toJson() {
            return "{\"message\":\"" + message + "\"}";
        }
    }

    @Override
    protected void doGet(HttpServletRequest request, HttpServletResponse response) throws IOException {
        byte[] body = new Message("Hello, World!").toJson().getBytes(StandardCharsets.UTF_8);
        response.setContentType(CONTENT_TYPE);
        response.setContentLength(body.length);
        response.getOutputStream().write(body);
    }
}
