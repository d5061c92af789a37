/*
 * crossbench JVM probe: attaches to a running JVM and prints JSON lines.
 *
 *   java -XX:TieredStopAtLevel=1 -Xshare:auto -XX:+UseSerialGC -Xmx32m \
 *        runner/probes/JvmProbe.java <pid> <interval_ms> [--ignore-stdin]
 *
 * Run it with the same JDK as the target (source launcher, no build step). It attaches with
 * the Attach API, starts the target's local JMX agent (startLocalManagementAgent), connects
 * to it and prints, one JSON object per line, flushed:
 *   {"type":"jvm", ...}    once: processors, GC names, VM name/version, input args, heap max
 *   {"type":"pool", ...}   every interval: Tomcat connector pools (*:type=ThreadPool,name=*),
 *                          executors (*:type=Executor,name=*), JVM thread counts; GC totals
 *                          ("gc") at most once a second. MBean names are re-queried every 2 s,
 *                          so a connector registered later shows up within 2 s, and at once on
 *                          a stdin line "names <token>": the next line queried them afresh and
 *                          carries "names_token":<token> (a probe attached while the server
 *                          starts asks once the server answers: every MBean exists by then).
 *   {"type":"end","reason":...}      on a clean exit (stdin closed, SIGTERM, target gone)
 *   {"type":"error","message":...}   when it cannot attach or connect (exit status 2)
 * The MBean domain is matched with "*" because standalone Tomcat registers "Catalina:..."
 * while embedded Tomcat registers under its engine name ("Tomcat:..." by default).
 * Attribute values Tomcat reports as -1 (e.g. a connector on a virtual-thread executor) are
 * passed through unchanged; attributes that do not exist are null.
 * Side effect on the target: its JMX agent stays started and adds a few RMI/JMX threads.
 * Exits when stdin reaches EOF (unless --ignore-stdin), on SIGTERM, or when the target dies.
 */

import com.sun.tools.attach.AttachNotSupportedException;
import com.sun.tools.attach.VirtualMachine;

import javax.management.Attribute;
import javax.management.AttributeList;
import javax.management.MBeanServerConnection;
import javax.management.ObjectName;
import javax.management.openmbean.CompositeData;
import javax.management.remote.JMXConnector;
import javax.management.remote.JMXConnectorFactory;
import javax.management.remote.JMXServiceURL;
import java.io.BufferedReader;
import java.io.FileDescriptor;
import java.io.FileOutputStream;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Collection;
import java.util.HashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;

public class JvmProbe {

    static final String[] POOL_ATTRS = {"currentThreadCount", "currentThreadsBusy", "maxThreads", "connectionCount"};
    static final String[] EXECUTOR_ATTRS = {"poolSize", "activeCount", "maxThreads", "queueSize"};
    // HikariCP's pool MBean (registerMbeans): com.zaxxer.hikari:type=Pool (<poolName>)
    static final String[] DB_POOL_ATTRS = {"ActiveConnections", "IdleConnections", "TotalConnections",
                                           "ThreadsAwaitingConnection"};
    static final String[] THREADING_ATTRS = {"ThreadCount", "PeakThreadCount", "DaemonThreadCount"};
    static final String[] GC_ATTRS = {"CollectionCount", "CollectionTime"};

    static final long NAMES_EVERY_NS = 2_000_000_000L;   // re-query pool/executor MBean names
    static final long GC_EVERY_NS = 1_000_000_000L;      // GC totals at most once a second
    static final PrintStream OUT = new PrintStream(new FileOutputStream(FileDescriptor.out), false, StandardCharsets.UTF_8);
    static volatile String stopReason = null;
    static volatile boolean signalled = false;
    static volatile boolean exiting = false;
    static volatile long namesWanted = 0;       // the last "names <token>" read from stdin; 0: none

    public static void main(String[] args) throws Exception {
        if (args.length < 2) {
            System.err.println("usage: java JvmProbe.java <pid> <interval_ms> [--ignore-stdin]");
            System.exit(64);
        }
        String pid = args[0];
        long intervalMs = Long.parseLong(args[1]);
        boolean watchStdin = !(args.length > 2 && args[2].equals("--ignore-stdin"));
        long targetPid = Long.parseLong(pid);

        String address;
        try {
            VirtualMachine vm = VirtualMachine.attach(pid);
            try {
                address = vm.startLocalManagementAgent();
            } finally {
                vm.detach();
            }
        } catch (AttachNotSupportedException e) {
            fail("cannot attach to JVM " + pid + " (started with -XX:+DisableAttachMechanism, "
                    + "another user, or not a HotSpot JVM): " + e.getMessage());
            return;
        } catch (IOException | RuntimeException e) {
            fail("attach to JVM " + pid + " failed: " + e);
            return;
        }

        JMXConnector connector;
        MBeanServerConnection m;
        try {
            connector = JMXConnectorFactory.connect(new JMXServiceURL(address));
            m = connector.getMBeanServerConnection();
        } catch (IOException | RuntimeException e) {
            fail("JMX connect to " + address + " failed: " + e);
            return;
        }

        Thread main = Thread.currentThread();
        Runtime.getRuntime().addShutdownHook(new Thread(() -> {
            if (exiting) return;                 // main itself is in System.exit: nothing to wait for
            signalled = true;
            if (stopReason == null) stopReason = "signal";
            main.interrupt();
            try { main.join(2000); } catch (InterruptedException ignored) { }
        }, "probe-shutdown"));
        if (watchStdin) {
            Thread t = new Thread(() -> {
                try {
                    BufferedReader in = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
                    for (String request; (request = in.readLine()) != null; ) {
                        String[] words = request.trim().split(" ");
                        if (words.length == 2 && words[0].equals("names")) {
                            try { namesWanted = Long.parseLong(words[1]); } catch (NumberFormatException ignored) { }
                        }
                    }
                } catch (IOException ignored) { }
                if (stopReason == null) stopReason = "stdin_closed";
                main.interrupt();
            }, "probe-stdin");
            t.setDaemon(true);
            t.start();
        }

        int status = 0;
        try {
            List<ObjectName> gcNames = new ArrayList<>(new TreeSet<>(
                    m.queryNames(new ObjectName("java.lang:type=GarbageCollector,name=*"), null)));
            emit(jvmLine(m, gcNames, targetPid, address));
            long next = System.nanoTime();
            long namesAt = Long.MIN_VALUE, gcAt = Long.MIN_VALUE, namesAnswered = 0;
            List<ObjectName> pools = List.of(), executors = List.of(), dbPools = List.of();
            while (stopReason == null) {
                if (!ProcessHandle.of(targetPid).map(ProcessHandle::isAlive).orElse(false)) {
                    stopReason = "target_gone";
                    break;
                }
                String line;
                try {
                    long now = System.nanoTime();
                    long token = namesWanted;
                    boolean asked = token != namesAnswered;
                    if (asked || now - namesAt >= NAMES_EVERY_NS || namesAt == Long.MIN_VALUE) {
                        pools = sorted(m.queryNames(new ObjectName("*:type=ThreadPool,name=*"), null));
                        executors = sorted(m.queryNames(new ObjectName("*:type=Executor,name=*"), null));
                        dbPools = sorted(m.queryNames(new ObjectName("com.zaxxer.hikari:type=Pool *"), null));
                        namesAt = now;
                        namesAnswered = token;
                    }
                    boolean withGc = now - gcAt >= GC_EVERY_NS || gcAt == Long.MIN_VALUE;
                    if (withGc) gcAt = now;
                    line = poolLine(m, pools, executors, dbPools, withGc ? gcNames : null, asked ? token : 0);
                } catch (IOException e) {
                    if (stopReason != null) break;      // interrupted RMI call while stopping
                    stopReason = "target_gone";         // JMX connection lost: the target went away
                    break;
                }
                if (stopReason != null) break;
                emit(line);
                next += intervalMs * 1_000_000L;
                long now = System.nanoTime();
                if (next < now) next += ((now - next) / (intervalMs * 1_000_000L) + 1) * intervalMs * 1_000_000L;
                try {
                    Thread.sleep((next - now) / 1_000_000L, (int) ((next - now) % 1_000_000L));
                } catch (InterruptedException e) {
                    if (stopReason == null) stopReason = "interrupted";
                }
            }
        } catch (Exception e) {
            if (stopReason == null) {
                stopReason = "error";
                emit("{\"type\":\"error\",\"message\":" + str(e.toString()) + "}");
                status = 1;
            }
        } finally {
            try { connector.close(); } catch (Exception ignored) { }
        }
        emit("{\"type\":\"end\",\"reason\":" + str(stopReason) + ",\"t_epoch\":" + epoch() + "}");
        if (!signalled) {                      // during a signal the JVM is already shutting down
            exiting = true;
            System.exit(status);
        }
    }

    static void fail(String message) {
        emit("{\"type\":\"error\",\"message\":" + str(message) + "}");
        System.err.println("JvmProbe: " + message);
        System.exit(2);
    }

    static synchronized void emit(String line) {
        OUT.print(line);
        OUT.print('\n');
        OUT.flush();
    }

    static String epoch() {
        return String.format(Locale.ROOT, "%.3f", System.currentTimeMillis() / 1000.0);
    }

    static String jvmLine(MBeanServerConnection m, List<ObjectName> gcNames, long pid, String address) throws Exception {
        Map<String, Object> rt = attrs(m, new ObjectName("java.lang:type=Runtime"),
                "VmName", "VmVersion", "VmVendor", "SpecVersion", "InputArguments", "StartTime");
        Map<String, Object> os = attrs(m, new ObjectName("java.lang:type=OperatingSystem"), "AvailableProcessors");
        Map<String, Object> mem = attrs(m, new ObjectName("java.lang:type=Memory"), "HeapMemoryUsage");
        Object heapMax = null;
        if (mem.get("HeapMemoryUsage") instanceof CompositeData) {
            heapMax = ((CompositeData) mem.get("HeapMemoryUsage")).get("max");
        }
        List<String> gc = new ArrayList<>();
        for (ObjectName n : gcNames) gc.add(n.getKeyProperty("name"));
        List<String> args = new ArrayList<>();
        if (rt.get("InputArguments") instanceof String[]) {
            for (String a : (String[]) rt.get("InputArguments")) args.add(a);
        }
        StringBuilder b = new StringBuilder("{\"type\":\"jvm\"");
        b.append(",\"t_epoch\":").append(epoch());
        b.append(",\"pid\":").append(pid);
        b.append(",\"available_processors\":").append(num(os.get("AvailableProcessors")));
        b.append(",\"gc\":").append(strList(gc));
        b.append(",\"vm_name\":").append(str(rt.get("VmName")));
        b.append(",\"vm_version\":").append(str(rt.get("VmVersion")));
        b.append(",\"vm_vendor\":").append(str(rt.get("VmVendor")));
        b.append(",\"spec_version\":").append(str(rt.get("SpecVersion")));
        b.append(",\"start_time_ms\":").append(num(rt.get("StartTime")));
        b.append(",\"input_arguments\":").append(strList(args));
        b.append(",\"heap_max_bytes\":").append(num(heapMax));
        b.append(",\"jmx_address\":").append(str(address));
        b.append(",\"probe_java_version\":").append(str(System.getProperty("java.version")));
        return b.append('}').toString();
    }

    /** pools/executors/dbPools: MBean names (re-queried every 2 s); gcNames null: no GC totals this time;
     *  namesToken: the stdin request these names answer (0: none). */
    static String poolLine(MBeanServerConnection m, List<ObjectName> pools, List<ObjectName> executors,
                           List<ObjectName> dbPools, List<ObjectName> gcNames, long namesToken) throws Exception {
        String t = epoch();
        StringBuilder b = new StringBuilder("{\"type\":\"pool\",\"t_epoch\":").append(t);
        if (namesToken != 0) b.append(",\"names_token\":").append(namesToken);
        Map<String, Object> th = attrs(m, new ObjectName("java.lang:type=Threading"), THREADING_ATTRS);
        b.append(",\"jvm_threads\":").append(num(th.get("ThreadCount")));
        b.append(",\"jvm_threads_peak\":").append(num(th.get("PeakThreadCount")));
        b.append(",\"jvm_threads_daemon\":").append(num(th.get("DaemonThreadCount")));
        b.append(",\"pools\":[");
        boolean first = true;
        for (ObjectName n : pools) {
            Map<String, Object> a = attrs(m, n, POOL_ATTRS);
            if (!first) b.append(',');
            first = false;
            b.append("{\"kind\":\"connector\",\"name\":").append(str(unquote(n.getKeyProperty("name"))))
             .append(",\"domain\":").append(str(n.getDomain()))
             .append(",\"current\":").append(num(a.get("currentThreadCount")))
             .append(",\"busy\":").append(num(a.get("currentThreadsBusy")))
             .append(",\"max\":").append(num(a.get("maxThreads")))
             .append(",\"connections\":").append(num(a.get("connectionCount")))
             .append('}');
        }
        for (ObjectName n : executors) {
            Map<String, Object> a = attrs(m, n, EXECUTOR_ATTRS);
            if (!first) b.append(',');
            first = false;
            b.append("{\"kind\":\"executor\",\"name\":").append(str(unquote(n.getKeyProperty("name"))))
             .append(",\"domain\":").append(str(n.getDomain()))
             .append(",\"current\":").append(num(a.get("poolSize")))
             .append(",\"busy\":").append(num(a.get("activeCount")))
             .append(",\"max\":").append(num(a.get("maxThreads")))
             .append(",\"connections\":null")
             .append(",\"queue\":").append(num(a.get("queueSize")))
             .append('}');
        }
        b.append("],\"db_pools\":[");
        first = true;
        for (ObjectName n : dbPools) {
            Map<String, Object> a = attrs(m, n, DB_POOL_ATTRS);
            if (!first) b.append(',');
            first = false;
            b.append("{\"name\":").append(str(n.getKeyProperty("type")))
             .append(",\"active\":").append(num(a.get("ActiveConnections")))
             .append(",\"idle\":").append(num(a.get("IdleConnections")))
             .append(",\"total\":").append(num(a.get("TotalConnections")))
             .append(",\"waiting\":").append(num(a.get("ThreadsAwaitingConnection")))
             .append('}');
        }
        b.append(']');
        if (gcNames == null) return b.append('}').toString();
        b.append(",\"gc\":[");
        first = true;
        for (ObjectName n : gcNames) {
            Map<String, Object> a = attrs(m, n, GC_ATTRS);
            if (!first) b.append(',');
            first = false;
            b.append("{\"name\":").append(str(n.getKeyProperty("name")))
             .append(",\"count\":").append(num(a.get("CollectionCount")))
             .append(",\"time_ms\":").append(num(a.get("CollectionTime")))
             .append('}');
        }
        return b.append("]}").toString();
    }

    /** One round trip; attributes that do not exist or fail are simply absent (-> null). */
    static Map<String, Object> attrs(MBeanServerConnection m, ObjectName n, String... names) throws Exception {
        Map<String, Object> out = new HashMap<>();
        AttributeList list;
        try {
            list = m.getAttributes(n, names);
        } catch (javax.management.InstanceNotFoundException e) {
            return out;                                  // MBean unregistered meanwhile
        }
        for (Attribute a : list.asList()) out.put(a.getName(), a.getValue());
        return out;
    }

    static List<ObjectName> sorted(Set<ObjectName> names) {
        List<ObjectName> l = new ArrayList<>(names);
        l.sort((x, y) -> x.getCanonicalName().compareTo(y.getCanonicalName()));
        return l;
    }

    static String unquote(String s) {
        if (s != null && s.length() >= 2 && s.startsWith("\"") && s.endsWith("\"")) {
            try { return ObjectName.unquote(s); } catch (IllegalArgumentException e) { return s; }
        }
        return s;
    }

    static String num(Object o) {
        if (o instanceof Number) {
            if (o instanceof Double || o instanceof Float) {
                double d = ((Number) o).doubleValue();
                return Double.isFinite(d) ? Double.toString(d) : "null";
            }
            return o.toString();
        }
        return "null";
    }

    static String strList(Collection<String> items) {
        StringBuilder b = new StringBuilder("[");
        boolean first = true;
        for (String s : items) {
            if (!first) b.append(',');
            first = false;
            b.append(str(s));
        }
        return b.append(']').toString();
    }

    static String str(Object o) {
        if (o == null) return "null";
        String s = o.toString();
        StringBuilder b = new StringBuilder(s.length() + 2).append('"');
        for (int i = 0; i < s.length(); i++) {
            char c = s.charAt(i);
            switch (c) {
                case '"': b.append("\\\""); break;
                case '\\': b.append("\\\\"); break;
                case '\n': b.append("\\n"); break;
                case '\r': b.append("\\r"); break;
                case '\t': b.append("\\t"); break;
                default:
                    if (c < 0x20) b.append(String.format(Locale.ROOT, "\\u%04x", (int) c));
                    else b.append(c);
            }
        }
        return b.append('"').toString();
    }
}
