import pytest

from crossbench_contract.delay import parse_delay


@pytest.mark.parametrize("values, ms", [(["0"], 0), (["300"], 300), (["60000"], 60000), (["000300"], 300)])
def test_accepts(values, ms):
    assert parse_delay(values) == ms


@pytest.mark.parametrize("values", [[], [""], ["-1"], ["+5"], [" 5"], ["1.5"], ["1e3"], ["60001"], ["999999"],
                                    ["99999999999999999999"], ["١٢٣"], ["1", "2"]])
def test_rejects(values):
    with pytest.raises(ValueError, match="ms must be one integer from 0 to 60000"):
        parse_delay(values)
