package org.crossbench.servlet;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;
import org.junit.jupiter.api.Test;

class DelayParameterTest {

    @ParameterizedTest
    @ValueSource(strings = {"0", "1", "300", "1000", "60000", "000300"})
    void acceptsIntegersUpToTheCap(String value) {
        assertEquals(Integer.parseInt(value), DelayParameter.parse(new String[] {value}));
    }

    @ParameterizedTest
    @ValueSource(strings = {"", "-1", "+5", " 5", "5 ", "1.5", "1e3", "abc", "0x10", "60001", "999999",
        "99999999999999999999", "١٢٣"})
    void rejectsEverythingElse(String value) {
        DelayParameter.InvalidDelayException e = assertThrows(DelayParameter.InvalidDelayException.class,
            () -> DelayParameter.parse(new String[] {value}));
        assertTrue(e.getMessage().endsWith(DelayParameter.RULE), e.getMessage());
    }

    @Test
    void rejectsMissingAndRepeated() {
        assertThrows(DelayParameter.InvalidDelayException.class, () -> DelayParameter.parse(null));
        assertThrows(DelayParameter.InvalidDelayException.class, () -> DelayParameter.parse(new String[0]));
        DelayParameter.InvalidDelayException e = assertThrows(DelayParameter.InvalidDelayException.class,
            () -> DelayParameter.parse(new String[] {"1", "2"}));
        assertTrue(e.getMessage().startsWith("ms given 2 times"), e.getMessage());
    }
}
