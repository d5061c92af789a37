package org.crossbench.servlet.db;

import java.io.IOException;
import java.sql.Connection;
import java.sql.SQLException;
import java.util.Optional;
import javax.servlet.annotation.WebServlet;
import javax.servlet.http.HttpServlet;
import javax.servlet.http.HttpServletRequest;
import javax.servlet.http.HttpServletResponse;
import com.zaxxer.hikari.HikariDataSource;
import org.crossbench.servlet.DelayParameter;

/** The database endpoints: blocking JDBC on the request thread (a platform thread, or a virtual one). */
public final class DbServlets {

    private DbServlets() {
    }

    /** One request's work on a pooled connection; returns the body (JSON, or the fortunes' HTML). */
    interface Work {
        String on(Connection connection) throws SQLException;
    }

    abstract static class DbServlet extends HttpServlet {
        private static final long serialVersionUID = 1L;

        void answer(HttpServletResponse response, Work work) throws IOException {
            answer(response, work, DbResponse.JSON);
        }

        void answer(HttpServletResponse response, Work work, String contentType) throws IOException {
            Optional<HikariDataSource> pool = Database.pool(getServletContext());
            if (pool.isEmpty()) {
                DbResponse.notConfigured(response);
                return;
            }
            String body;
            try (Connection connection = pool.get().getConnection()) {
                body = work.on(connection);
            } catch (SQLException e) {
                DbResponse.unavailable(response, e);
                return;
            }
            DbResponse.write(response, contentType, body);
        }
    }

    /** Every database endpoint, one servlet, one answer each: which one is the request's path (an exact mapping). */
    @WebServlet(urlPatterns = {"/db", "/queries", "/db/kv", "/db/slow", "/fortunes", "/updates"})
    public static class Endpoints extends DbServlet {
        private static final long serialVersionUID = 1L;

        @Override
        protected void doGet(HttpServletRequest request, HttpServletResponse response) throws IOException {
            switch (request.getServletPath()) {
                case "/db" -> answer(response, WorldQueries::world);        // one random row of world
                case "/queries" -> {                                        // ?queries=N: N random rows, one query each
                    int count = QueryCount.parse(request.getParameter("queries"));
                    answer(response, connection -> WorldQueries.worlds(connection, count));
                }
                case "/db/kv" -> answer(response, WorldQueries::kv);        // one random row of kv (seed 004's table)
                case "/db/slow" -> {        // ?ms=N: one world row by a query that waits N ms inside the database
                    int ms = DelayParameter.fromRequest(request, response);
                    if (ms >= 0) {
                        answer(response, connection -> WorldQueries.slow(connection, ms));
                    }
                }
                case "/fortunes" ->         // every fortune, one added now, sorted by message, an escaped HTML table
                    answer(response, connection -> Fortunes.html(Fortunes.withAdded(Fortunes.read(connection))),
                            DbResponse.HTML);
                case "/updates" -> {        // ?queries=N: N random rows of world, each read, changed and written back
                    int count = QueryCount.parse(request.getParameter("queries"));
                    answer(response, connection -> WorldQueries.updates(connection, count));
                }
                default -> response.sendError(HttpServletResponse.SC_NOT_FOUND);
            }
        }
    }
}
