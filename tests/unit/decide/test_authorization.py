"""Who may act for the-loop: the room's grants, deciders and collaborators — fail closed."""

from dataclasses import replace

from hypothesis import given, settings
from hypothesis import strategies as st

from looproom.decide import authorization as auth
from looproom.decide.authorization import AccessPolicy
from looproom.settings import grants

POLICY = AccessPolicy(
    own_id="UBOT", authorized=frozenset({"UDECIDER"}), collaborators=frozenset({"UCOLLAB"})
)


def test_a_decider_may_do_every_act_the_room_is_granted() -> None:
    granted = {act for act in grants.ACTS if auth.may("UDECIDER", act, POLICY)}
    assert granted == set(grants.ACTS) - grants.OPT_IN
    everything = replace(POLICY, granted=frozenset(grants.GRANTABLE))
    assert all(auth.may("UDECIDER", act, everything) for act in grants.ACTS)


def test_a_work_items_own_collaborator_gives_input_on_that_work_item_only() -> None:
    policy = replace(POLICY, roster={"github:acme/api#7": frozenset({"UEVE"})})
    on_it, elsewhere = policy.on("github:acme/api#7"), policy.on("github:acme/api#8")
    assert {a for a in grants.ACTS if auth.may("UEVE", a, on_it)} == {grants.REPLY, grants.CONTEXT}
    assert not any(auth.may("UEVE", act, elsewhere) for act in grants.ACTS)
    assert not any(auth.may("UEVE", act, policy) for act in grants.ACTS)


def test_a_stranger_may_do_nothing() -> None:
    assert not any(auth.may("USTRANGER", act, POLICY) for act in grants.ACTS)


def test_a_collaborator_may_reply_and_add_context_but_not_decide() -> None:
    allowed = {act for act in grants.ACTS if auth.may("UCOLLAB", act, POLICY)}
    assert allowed == {grants.REPLY, grants.CONTEXT}


def test_an_empty_list_denies_everyone() -> None:
    nobody = AccessPolicy(own_id="UBOT", authorized=frozenset())
    assert not auth.may("UDECIDER", grants.REPLY, nobody)
    assert "nobody may" in auth.refusal_text("UDECIDER", grants.REPLY, nobody)


def test_an_unknown_act_is_refused_even_to_a_decider() -> None:
    assert not auth.may("UDECIDER", "work-item.delete", POLICY)


def test_an_act_the_room_is_not_granted_is_nobodys() -> None:
    narrow = AccessPolicy(
        "UBOT", frozenset({"UDECIDER"}), granted=frozenset({grants.GATE_FEEDBACK})
    )
    assert auth.may("UDECIDER", grants.GATE_FEEDBACK, narrow)
    assert auth.may("UDECIDER", grants.REPLY, narrow)  # a reply is always granted
    assert not auth.may("UDECIDER", grants.CONTROL, narrow)
    text = auth.refusal_text("UDECIDER", grants.CONTROL, narrow)
    assert "`control.command`" in text and "slack.publish" in text


def test_a_collaborators_refusal_names_the_act_that_is_not_theirs() -> None:
    text = auth.refusal_text("UCOLLAB", grants.GATE_FEEDBACK, POLICY)
    assert "`gate.feedback`" in text and "collaborator" in text
    assert "slack.authorizedUsers" in text


def test_a_stranger_hears_nothing_about_the_grants() -> None:
    text = auth.refusal_text("USTRANGER", grants.GATE_FEEDBACK, POLICY)
    assert text == auth.unauthorized_text("USTRANGER", POLICY.authorized)
    assert "collaborator" not in text and "gate.feedback" not in text


def test_status_lists_each_act_and_who_holds_it() -> None:
    narrow = AccessPolicy(
        "UBOT",
        frozenset({"UDECIDER"}),
        collaborators=frozenset({"UCOLLAB"}),
        granted=frozenset({grants.CONTEXT}),
    )
    lines = dict(line.split(": ", 1) for line in auth.holders(narrow))
    assert lines[grants.REPLY] == "`UDECIDER`, `UCOLLAB`"
    assert lines[grants.CONTEXT] == "`UDECIDER`, `UCOLLAB`"
    assert lines[grants.GATE_FEEDBACK].startswith("not granted")


@settings(deadline=None)  # a loaded machine must not fail a correct reading
@given(
    member=st.text(max_size=12),
    act=st.text(max_size=20) | st.sampled_from(grants.ACTS),
    granted=st.frozensets(st.sampled_from(grants.GRANTABLE)),
)
def test_nobody_off_both_lists_may_do_anything(member: str, act: str, granted) -> None:
    policy = AccessPolicy("UBOT", frozenset({"UDECIDER"}), collaborators=frozenset({"UCOLLAB"}))
    policy = AccessPolicy(
        "UBOT", policy.authorized, collaborators=policy.collaborators, granted=granted
    )
    if member not in ("UDECIDER", "UCOLLAB"):
        assert not auth.may(member, act, policy)
    if auth.may(member, act, policy):
        assert act == grants.REPLY or act in granted


# -- the words a refused member reads: what is not theirs, and the remedy, written out ---------


def test_a_member_refused_an_act_the_room_is_not_granted_reads_which_and_the_remedy() -> None:
    narrow = AccessPolicy("UBOT", frozenset({"UDECIDER"}), granted=frozenset())
    assert auth.refusal_text("UDECIDER", grants.CONTROL, narrow) == (
        "This room is not granted `control.command` — steering a run (execute, start, stop, "
        "skip …) — so nothing was relayed: `slack.publish` in theloop.yaml does not list it. "
        "Ask an operator to add it."
    )


def test_a_collaborator_refused_a_decision_reads_who_may_and_the_remedy() -> None:
    assert auth.refusal_text("UCOLLAB", grants.GATE_FEEDBACK, POLICY) == (
        "As a collaborator you may reply and add context, but `gate.feedback` — answering a "
        "gate (approve, changes) — is for members in `slack.authorizedUsers`, so nothing was "
        "relayed. Ask one of them, or an operator to list you there."
    )


def test_an_act_without_words_of_its_own_is_named_as_written() -> None:
    text = auth.refusal_text("UCOLLAB", "work-item.delete", POLICY)
    assert text.startswith("This room is not granted `work-item.delete` — `work-item.delete` —")


def test_a_stranger_reads_their_member_id_and_the_remedy() -> None:
    assert auth.unauthorized_text("USTRANGER", POLICY.authorized) == (
        "Only members listed in `slack.authorizedUsers` may decide for the-loop, and your "
        "member id `USTRANGER` is not there — nothing was relayed. Ask an operator to add it "
        "to `slack.authorizedUsers` in theloop.yaml."
    )
    assert auth.unauthorized_text("", frozenset()) == (
        "Only members listed in `slack.authorizedUsers` may decide for the-loop (the list is "
        "empty, so nobody may), and your member id `unknown` is not there — nothing was "
        "relayed. Ask an operator to add it to `slack.authorizedUsers` in theloop.yaml."
    )


def test_status_says_nobody_holds_an_act_no_one_may_do_and_lists_each_work_items_own() -> None:
    policy = AccessPolicy(
        "UBOT",
        frozenset(),
        collaborators=frozenset({"UCOLLAB"}),
        granted=frozenset({grants.GATE_FEEDBACK}),
        roster={"github:acme/api#7": frozenset({"UEVE", "UADA"})},
    )
    lines = auth.holders(policy)
    assert "gate.feedback: nobody" in lines  # deciders only, and there are none
    assert "work-item.reply: `UCOLLAB`" in lines
    assert lines[-1] == (
        "collaborators on github:acme/api#7 (reply, context there only): `UADA`, `UEVE`"
    )
