package org.crossbench.servlet.db;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

class DbShapesTest {

    @ParameterizedTest
    @CsvSource(value = {"NULL,1", "'',1", "abc,1", "0,1", "-5,1", "1,1", "20,20", "500,500", "501,500",
            "99999999999,1", "' 7 ',7"}, nullValues = "NULL")
    void queriesAreClampedAsTechEmpowerSays(String value, int expected) {
        assertEquals(expected, QueryCount.parse(value));
    }

    @Test
    void jsonShapesAreExact() {
        assertEquals("{\"id\":3217,\"randomNumber\":2149}", DbResponse.world(3217, 2149));
        assertEquals("{\"a\":\"0000012345\",\"b\":\"abcdefghijklmnopqrst\"}",
                DbResponse.kv(12345, "abcdefghijklmnopqrst"));
    }

    @Test
    void randomIdsStayInTheTable() {
        for (int i = 0; i < 10_000; i++) {
            int id = WorldQueries.randomId(WorldQueries.WORLD_ROWS);
            assertTrue(id >= 1 && id <= WorldQueries.WORLD_ROWS, "id " + id);
        }
    }

    @Test
    void thePoolIsFixedSizeAndWaitsBoundedly() {
        System.setProperty("crossbench.db.pool", "7");
        System.setProperty("crossbench.db.wait_ms", "1500");
        try {
            var config = Database.config("jdbc:postgresql://127.0.0.1:1/x");
            assertEquals(7, config.getMaximumPoolSize());
            assertEquals(7, config.getMinimumIdle());
            assertEquals(1500, config.getConnectionTimeout());
            assertTrue(config.isRegisterMbeans());
        } finally {
            System.clearProperty("crossbench.db.pool");
            System.clearProperty("crossbench.db.wait_ms");
        }
    }

    @Test
    void fortunesAreSortedEscapedAndGainTheAddedRow() {
        var rows = java.util.List.of(new Fortunes.Fortune(11, "<script>alert(\"x\");</script>"),
                new Fortunes.Fortune(2, "aren't & broken"), new Fortunes.Fortune(12, "\u30d5\u30ec"));
        String page = Fortunes.html(Fortunes.withAdded(rows));
        assertTrue(page.startsWith("<!DOCTYPE html><html><head><title>Fortunes</title></head><body><table>"), page);
        assertTrue(page.contains("<tr><td>11</td><td>&lt;script&gt;alert(&quot;x&quot;);&lt;/script&gt;</td></tr>"
                + "<tr><td>0</td><td>Additional fortune added at request time.</td></tr>"
                + "<tr><td>2</td><td>aren&#39;t &amp; broken</td></tr><tr><td>12</td><td>\u30d5\u30ec</td></tr>"), page);
    }
}
