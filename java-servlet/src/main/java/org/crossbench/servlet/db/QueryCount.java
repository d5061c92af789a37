package org.crossbench.servlet.db;

/** {@code queries=N} of /queries: clamped to 1..500; missing or not an integer is 1 (TechEmpower's rule). */
final class QueryCount {

    static final int MAX = 500;

    private QueryCount() {
    }

    static int parse(String value) {
        if (value == null) {
            return 1;
        }
        try {
            return Math.max(1, Math.min(MAX, Integer.parseInt(value.trim())));
        } catch (NumberFormatException e) {
            return 1;
        }
    }
}
