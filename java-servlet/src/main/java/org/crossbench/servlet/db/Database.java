package org.crossbench.servlet.db;

import com.zaxxer.hikari.HikariConfig;
import com.zaxxer.hikari.HikariDataSource;
import java.util.Optional;
import javax.servlet.ServletContext;
import javax.servlet.ServletContextEvent;
import javax.servlet.ServletContextListener;
import javax.servlet.annotation.WebListener;

/**
 * The connection pool of the database endpoints: HikariCP in front of the PostgreSQL JDBC driver, configured by
 * the runner through system properties. Without {@code crossbench.db.url} there is no pool and the endpoints
 * answer 503. The pool is fixed-size (minimumIdle = maximumPoolSize, as TechEmpower's Java entries run it) and
 * registers its MBean, so the runner's JVM probe reads active, idle and waiting counts.
 */
@WebListener
public class Database implements ServletContextListener {

    static final String ATTRIBUTE = Database.class.getName();
    static final String POOL_NAME = "crossbench";
    static final int DEFAULT_POOL = 10;          // HikariCP's own default maximumPoolSize
    static final long DEFAULT_WAIT_MS = 5_000;   // how long a request waits for a connection before 503

    @Override
    public void contextInitialized(ServletContextEvent event) {
        String url = System.getProperty("crossbench.db.url");
        if (url == null || url.isEmpty()) {
            return;
        }
        try {
            event.getServletContext().setAttribute(ATTRIBUTE, new HikariDataSource(config(url)));
        } catch (RuntimeException e) {
            // The other endpoints still serve; the database ones answer 503 (no pool), and the log says why.
            event.getServletContext().log("crossbench: the database pool did not start", e);
        }
    }

    @Override
    public void contextDestroyed(ServletContextEvent event) {
        pool(event.getServletContext()).ifPresent(HikariDataSource::close);
    }

    static HikariConfig config(String url) {
        HikariConfig config = new HikariConfig();
        config.setPoolName(POOL_NAME);
        config.setJdbcUrl(url);
        // Named: DriverManager does not see a driver that only the webapp's class loader holds.
        config.setDriverClassName("org.postgresql.Driver");
        int size = Integer.getInteger("crossbench.db.pool", DEFAULT_POOL);
        config.setMaximumPoolSize(size);
        config.setMinimumIdle(size);
        config.setConnectionTimeout(Long.getLong("crossbench.db.wait_ms", DEFAULT_WAIT_MS));
        config.setInitializationFailTimeout(-1);     // start without a database; requests then get 503
        config.setRegisterMbeans(true);
        config.setAutoCommit(true);
        // Server-side prepared statements from the first execution (the driver's default waits for five), or
        // none at all behind PgBouncer in transaction mode, where the next statement may meet another backend.
        boolean prepared = Boolean.parseBoolean(System.getProperty("crossbench.db.prepared", "true"));
        config.addDataSourceProperty("prepareThreshold", prepared ? "1" : "0");
        return config;
    }

    static Optional<HikariDataSource> pool(ServletContext context) {
        return Optional.ofNullable((HikariDataSource) context.getAttribute(ATTRIBUTE));
    }
}
