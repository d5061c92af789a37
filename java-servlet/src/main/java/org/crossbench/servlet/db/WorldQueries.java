package org.crossbench.servlet.db;

import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.util.concurrent.ThreadLocalRandom;

/** The queries of the database endpoints: one row per query, by a random key, never cached. */
final class WorldQueries {

    static final int WORLD_ROWS = 10_000;
    static final int KV_KEYS = 999_999;          // /db/kv reads a random a in 1..999999, as the article's app
    static final String WORLD = "SELECT id, randomnumber FROM world WHERE id = ?";
    static final String KV = "SELECT a, b FROM kv WHERE a = ?";
    // One statement that holds its connection for the delay inside the database, then reads the row.
    static final String SLOW = "SELECT w.id, w.randomnumber FROM world w, pg_sleep(? / 1000.0) WHERE w.id = ?";

    private WorldQueries() {
    }

    static int randomId(int upTo) {
        return ThreadLocalRandom.current().nextInt(1, upTo + 1);
    }

    static String world(Connection connection) throws SQLException {
        try (PreparedStatement statement = connection.prepareStatement(WORLD)) {
            return worldRow(statement, randomId(WORLD_ROWS));
        }
    }

    /** N rows, one query each, on one connection and one prepared statement. */
    static String worlds(Connection connection, int count) throws SQLException {
        StringBuilder body = new StringBuilder(count * 32).append('[');
        try (PreparedStatement statement = connection.prepareStatement(WORLD)) {
            for (int i = 0; i < count; i++) {
                body.append(i == 0 ? "" : ",").append(worldRow(statement, randomId(WORLD_ROWS)));
            }
        }
        return body.append(']').toString();
    }

    static String kv(Connection connection) throws SQLException {
        try (PreparedStatement statement = connection.prepareStatement(KV)) {
            statement.setInt(1, randomId(KV_KEYS));
            try (ResultSet row = statement.executeQuery()) {
                row.next();
                return DbResponse.kv(row.getInt(1), row.getString(2));
            }
        }
    }

    static String slow(Connection connection, int ms) throws SQLException {
        try (PreparedStatement statement = connection.prepareStatement(SLOW)) {
            statement.setInt(1, ms);
            return worldRow(statement, 2, randomId(WORLD_ROWS));
        }
    }

    private static String worldRow(PreparedStatement statement, int id) throws SQLException {
        return worldRow(statement, 1, id);
    }

    private static String worldRow(PreparedStatement statement, int idParameter, int id) throws SQLException {
        statement.setInt(idParameter, id);
        try (ResultSet row = statement.executeQuery()) {
            row.next();
            return DbResponse.world(row.getInt(1), row.getInt(2));
        }
    }
}
