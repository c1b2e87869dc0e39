"""Who may act for the-loop: fail closed, one question for every path."""

from looproom.decide import authorization
from looproom.decide.authorization import Policy

POLICY = Policy(own_id="UBOT", authorized=frozenset({"UDECIDER"}))


def test_a_listed_member_may_do_every_act() -> None:
    assert all(authorization.may("UDECIDER", act, POLICY) for act in authorization.ACTS)


def test_an_unlisted_member_may_do_nothing() -> None:
    assert not any(authorization.may("USTRANGER", act, POLICY) for act in authorization.ACTS)


def test_an_empty_list_denies_everyone() -> None:
    nobody = Policy(own_id="UBOT", authorized=frozenset())
    assert not authorization.may("UDECIDER", authorization.REPLY, nobody)
    assert "nobody may" in authorization.refusal_text("UDECIDER", authorization.REPLY, nobody)


def test_an_unknown_act_is_refused_even_to_a_decider() -> None:
    assert not authorization.may("UDECIDER", "work-item.delete", POLICY)
