package org.crossbench.servlet.db;

import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.util.Arrays;
import java.util.Comparator;
import java.util.concurrent.ThreadLocalRandom;

/** The queries of the database endpoints: one row per query, by a random key, never cached. */
final class WorldQueries {

    static final int WORLD_ROWS = 10_000;
    static final int KV_KEYS = 999_999;          // /db/kv reads a random a in 1..999999, as the article's app
    static final String WORLD = "SELECT id, randomnumber FROM world WHERE id = ?";
    static final String UPDATE = "UPDATE world SET randomnumber = ? WHERE id = ?";
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

    /**
     * /updates: N rows, each read by its own query and given a new random number, then written back in one JDBC
     * batch (one UPDATE per row, as TechEmpower allows), in id order so that concurrent requests cannot deadlock.
     */
    static String updates(Connection connection, int count) throws SQLException {
        int[][] rows = new int[count][];
        try (PreparedStatement select = connection.prepareStatement(WORLD)) {
            for (int i = 0; i < count; i++) {
                select.setInt(1, randomId(WORLD_ROWS));
                try (ResultSet row = select.executeQuery()) {
                    row.next();
                    rows[i] = new int[] {row.getInt(1), randomId(WORLD_ROWS)};
                }
            }
        }
        int[][] byId = rows.clone();
        Arrays.sort(byId, Comparator.comparingInt(row -> row[0]));
        try (PreparedStatement update = connection.prepareStatement(UPDATE)) {
            for (int[] row : byId) {
                update.setInt(1, row[1]);
                update.setInt(2, row[0]);
                update.addBatch();
            }
            update.executeBatch();
        }
        StringBuilder body = new StringBuilder(count * 32).append('[');
        for (int i = 0; i < count; i++) {
            body.append(i == 0 ? "" : ",").append(DbResponse.world(rows[i][0], rows[i][1]));
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
