package org.crossbench.servlet.db;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.sql.SQLException;
import java.sql.SQLTransientConnectionException;
import javax.servlet.http.HttpServletResponse;
import org.crossbench.servlet.TextResponse;

/** JSON answers of the database endpoints, and their 503 when no connection can be had. */
final class DbResponse {

    static final String JSON = "application/json";
    static final String HTML = "text/html; charset=UTF-8";

    private DbResponse() {
    }

    static String world(int id, int randomNumber) {
        return "{\"id\":" + id + ",\"randomNumber\":" + randomNumber + "}";
    }

    static String kv(int a, String b) {
        return "{\"a\":\"" + String.format("%010d", a) + "\",\"b\":\"" + b + "\"}";
    }

    static void write(HttpServletResponse response, String contentType, String body) throws IOException {
        byte[] bytes = body.getBytes(StandardCharsets.UTF_8);
        response.setContentType(contentType);
        response.setContentLength(bytes.length);
        response.getOutputStream().write(bytes);
    }

    /** 503 with a plain reason: the pool's wait limit passed, or the database is down. Never a stack trace. */
    static void unavailable(HttpServletResponse response, SQLException e) throws IOException {
        String reason = e instanceof SQLTransientConnectionException
                ? "no database connection within the pool's wait limit"
                : "database unavailable: " + firstLine(e.getMessage());
        TextResponse.error(response, HttpServletResponse.SC_SERVICE_UNAVAILABLE, reason);
    }

    static void notConfigured(HttpServletResponse response) throws IOException {
        TextResponse.error(response, HttpServletResponse.SC_SERVICE_UNAVAILABLE,
                "no database configured: start the server with --db-url");
    }

    private static String firstLine(String message) {
        return message == null ? "unknown error" : message.lines().findFirst().orElse("unknown error");
    }
}
