package org.crossbench.servlet.db;

import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;

/** TechEmpower's fortunes: every row of the table, one more added at request time, sorted by message, as HTML. */
final class Fortunes {

    static final String ALL = "SELECT id, message FROM fortune";
    static final String ADDED = "Additional fortune added at request time.";

    /** One row of the fortune table. */
    static final class Fortune {
        final int id;
        final String message;

        Fortune(int id, String message) {
            this.id = id;
            this.message = message;
        }
    }

    private Fortunes() {
    }

    static List<Fortune> read(Connection connection) throws SQLException {
        List<Fortune> fortunes = new ArrayList<>();
        try (PreparedStatement statement = connection.prepareStatement(ALL);
             ResultSet rows = statement.executeQuery()) {
            while (rows.next()) {
                fortunes.add(new Fortune(rows.getInt(1), rows.getString(2)));
            }
        }
        return fortunes;
    }

    /** The rows plus the added one, sorted by message. */
    static List<Fortune> withAdded(List<Fortune> fortunes) {
        List<Fortune> all = new ArrayList<>(fortunes);
        all.add(new Fortune(0, ADDED));
        all.sort(Comparator.comparing(fortune -> fortune.message));
        return all;
    }

    /** The page, written as a plain servlet writes HTML: every message escaped. */
    static String html(List<Fortune> fortunes) {
        StringBuilder page = new StringBuilder(2048).append("<!DOCTYPE html><html><head><title>Fortunes</title>"
                + "</head><body><table><tr><th>id</th><th>message</th></tr>");
        for (Fortune fortune : fortunes) {
            page.append("<tr><td>").append(fortune.id).append("</td><td>");
            escape(fortune.message, page);
            page.append("</td></tr>");
        }
        return page.append("</table></body></html>").toString();
    }

    /** HTML escaping of text in an element: the five characters that could end it or open markup. */
    static void escape(String text, StringBuilder out) {
        for (int i = 0; i < text.length(); i++) {
            char c = text.charAt(i);
            switch (c) {
                case '&': out.append("&amp;"); break;
                case '<': out.append("&lt;"); break;
                case '>': out.append("&gt;"); break;
                case '"': out.append("&quot;"); break;
                case '\'': out.append("&#39;"); break;
                default: out.append(c);
            }
        }
    }
}
