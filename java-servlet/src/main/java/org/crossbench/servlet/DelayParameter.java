package org.crossbench.servlet;

import java.io.IOException;
import java.util.regex.Pattern;
import javax.servlet.http.HttpServletRequest;
import javax.servlet.http.HttpServletResponse;

/**
 * Parses the {@code ms} query parameter of the delay endpoints, under the rules both servers share:
 * exactly one value, plain decimal digits, 0 to {@link #MAX_MS}. Anything else is a 400 with this message.
 */
public final class DelayParameter {

    public static final int MAX_MS = 60_000;
    static final String RULE = "ms must be one integer from 0 to " + MAX_MS;

    // Digits only: no sign, no spaces, no exponent. Six digits is enough to tell "too big" from garbage.
    private static final Pattern DIGITS = Pattern.compile("[0-9]{1,6}");

    private DelayParameter() {
    }

    /** Returns the delay in milliseconds, or throws {@link InvalidDelayException} naming the rule broken. */
    public static int parse(String[] values) {
        if (values == null || values.length == 0) {
            throw new InvalidDelayException("missing ms; " + RULE);
        }
        if (values.length > 1) {
            throw new InvalidDelayException("ms given " + values.length + " times; " + RULE);
        }
        String value = values[0];
        if (!DIGITS.matcher(value).matches()) {
            throw new InvalidDelayException("ms is not a non-negative integer; " + RULE);
        }
        int ms = Integer.parseInt(value);
        if (ms > MAX_MS) {
            throw new InvalidDelayException("ms above the cap; " + RULE);
        }
        return ms;
    }

    /** The request's delay in milliseconds, or -1 after answering 400 with the rule it broke. */
    public static int fromRequest(HttpServletRequest request, HttpServletResponse response) throws IOException {
        try {
            return parse(request.getParameterValues("ms"));
        } catch (InvalidDelayException e) {
            TextResponse.error(response, HttpServletResponse.SC_BAD_REQUEST, e.getMessage());
            return -1;
        }
    }

    /** A delay request that breaks the rules; its message is the 400 body. */
    public static final class InvalidDelayException extends IllegalArgumentException {
        private static final long serialVersionUID = 1L;

        InvalidDelayException(String message) {
            super(message);
        }
    }
}
