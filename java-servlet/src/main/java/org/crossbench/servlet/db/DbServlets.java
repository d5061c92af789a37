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

    /** {@code /db}: one random row of world. */
    @WebServlet(urlPatterns = "/db")
    public static class Single extends DbServlet {
        private static final long serialVersionUID = 1L;

        @Override
        protected void doGet(HttpServletRequest request, HttpServletResponse response) throws IOException {
            answer(response, WorldQueries::world);
        }
    }

    /** {@code /queries?queries=N}: N random rows of world, one query each. */
    @WebServlet(urlPatterns = "/queries")
    public static class Multiple extends DbServlet {
        private static final long serialVersionUID = 1L;

        @Override
        protected void doGet(HttpServletRequest request, HttpServletResponse response) throws IOException {
            int count = QueryCount.parse(request.getParameter("queries"));
            answer(response, connection -> WorldQueries.worlds(connection, count));
        }
    }

    /** {@code /db/kv}: one random row of kv (the seed-004 article's table). */
    @WebServlet(urlPatterns = "/db/kv")
    public static class KeyValue extends DbServlet {
        private static final long serialVersionUID = 1L;

        @Override
        protected void doGet(HttpServletRequest request, HttpServletResponse response) throws IOException {
            answer(response, WorldQueries::kv);
        }
    }

    /** {@code /db/slow?ms=N}: one world row by a query that waits N ms inside the database, holding its connection. */
    @WebServlet(urlPatterns = "/db/slow")
    public static class Slow extends DbServlet {
        private static final long serialVersionUID = 1L;

        @Override
        protected void doGet(HttpServletRequest request, HttpServletResponse response) throws IOException {
            int ms = DelayParameter.fromRequest(request, response);
            if (ms >= 0) {
                answer(response, connection -> WorldQueries.slow(connection, ms));
            }
        }
    }

    /** {@code /fortunes}: every fortune, one added at request time, sorted by message, as an escaped HTML table. */
    @WebServlet(urlPatterns = "/fortunes")
    public static class FortunesPage extends DbServlet {
        private static final long serialVersionUID = 1L;

        @Override
        protected void doGet(HttpServletRequest request, HttpServletResponse response) throws IOException {
            answer(response, connection -> Fortunes.html(Fortunes.withAdded(Fortunes.read(connection))),
                    DbResponse.HTML);
        }
    }

    /** {@code /updates?queries=N}: N random rows of world, each read, given a new random number and written back. */
    @WebServlet(urlPatterns = "/updates")
    public static class Updates extends DbServlet {
        private static final long serialVersionUID = 1L;

        @Override
        protected void doGet(HttpServletRequest request, HttpServletResponse response) throws IOException {
            int count = QueryCount.parse(request.getParameter("queries"));
            answer(response, connection -> WorldQueries.updates(connection, count));
        }
    }
}
