import pytest

from roost.core.errors import RoostError
from roost.core.names import check_name, name_problem


@pytest.mark.parametrize("name", ["a", "9lives", "fix-login_2", "A" * 64, "x-", "a_b-c"])
def test_good_names(name: str) -> None:
    assert name_problem(name) is None
    assert check_name(name) == name


@pytest.mark.parametrize(
    ("name", "why"),
    [
        pytest.param("", "empty", id="empty"),
        pytest.param("a" * 65, "at most 64", id="too-long"),
        pytest.param("-rf", "start with a letter or a digit", id="leading-dash"),
        pytest.param("_x", "start with a letter or a digit", id="leading-underscore"),
        pytest.param("a.b", "only ASCII letters", id="dot"),
        pytest.param("a:b", "only ASCII letters", id="colon"),
        pytest.param("a b", "only ASCII letters", id="space"),
        pytest.param("$(rm -rf ~)", "has '$'", id="command-substitution"),
        pytest.param("x$(id)", "only ASCII letters", id="substitution-inside"),
        pytest.param("café", "only ASCII letters", id="non-ascii"),
        pytest.param("ñ", "only ASCII letters", id="non-ascii-first"),
        pytest.param("a/b", "only ASCII letters", id="slash"),
        pytest.param("a\nb", "only ASCII letters", id="newline"),
    ],
)
def test_bad_names(name: str, why: str) -> None:
    problem = name_problem(name)
    assert problem is not None and why in problem
    with pytest.raises(RoostError) as err:
        check_name(name)
    assert err.value.code == 2
