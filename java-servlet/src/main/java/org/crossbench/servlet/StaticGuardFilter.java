package org.crossbench.servlet;

import java.io.IOException;
import javax.servlet.FilterChain;
import javax.servlet.ServletException;
import javax.servlet.annotation.WebFilter;
import javax.servlet.http.HttpFilter;
import javax.servlet.http.HttpServletRequest;
import javax.servlet.http.HttpServletResponse;

/**
 * Sits in front of Tomcat's DefaultServlet on {@code /static/*} so that static files honour the contract:
 * only GET and HEAD (DefaultServlet would answer POST as GET), and a directory is 404 (no listing, no welcome file).
 */
@WebFilter(urlPatterns = "/static/*")
public class StaticGuardFilter extends HttpFilter {
    private static final long serialVersionUID = 1L;

    static final String ALLOWED = "GET, HEAD";

    @Override
    protected void doFilter(HttpServletRequest request, HttpServletResponse response, FilterChain chain)
            throws IOException, ServletException {
        String method = request.getMethod();
        if (!"GET".equals(method) && !"HEAD".equals(method)) {
            response.setHeader("Allow", ALLOWED);
            TextResponse.error(response, HttpServletResponse.SC_METHOD_NOT_ALLOWED, "method not allowed");
            return;
        }
        if (isDirectory(pathOf(request)) || isDirectory(rawPathOf(request))) {
            TextResponse.error(response, HttpServletResponse.SC_NOT_FOUND, "not found");
            return;
        }
        chain.doFilter(request, response);
    }

    /** The decoded, normalised path inside the webapp (DefaultServlet is mapped to "/", so it has no pathInfo). */
    static String pathOf(HttpServletRequest request) {
        String pathInfo = request.getPathInfo();
        return pathInfo == null ? request.getServletPath() : request.getServletPath() + pathInfo;
    }

    /**
     * The path as the client sent it, without path parameters. For "/static/" Tomcat's mapper has already
     * swapped in the welcome file, so only the raw URI still shows a directory was asked for.
     */
    static String rawPathOf(HttpServletRequest request) {
        String uri = request.getRequestURI();
        int parameters = uri.indexOf(';');
        return parameters < 0 ? uri : uri.substring(0, parameters);
    }

    static boolean isDirectory(String path) {
        return path.equals("/static") || path.endsWith("/");
    }
}
