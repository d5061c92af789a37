package org.crossbench.servlet;

import static org.junit.jupiter.api.Assertions.assertEquals;

import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

class StaticGuardFilterTest {

    @ParameterizedTest
    @CsvSource({"/static,true", "/static/,true", "/static/sub/,true", "/static/index.html,false",
        "/static/big.jpg,false", "/staticx,false"})
    void directoriesAreRecognised(String path, boolean directory) {
        assertEquals(directory, StaticGuardFilter.isDirectory(path));
    }
}
