"""Skills: Agent Skills validation, three levels (frontmatter only for listing), resources kept
inside the skill folder, and malformed skills that never take the others down."""

from __future__ import annotations

import datetime
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest
import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from ore.errors import SkillError
from ore.skills import (
    FRONTMATTER_LIMIT,
    RESOURCE_LIMIT,
    activate,
    bundled_skills_dir,
    discover_skills,
    find_skill,
    inspect_skill,
    list_resources,
    parse_frontmatter,
    read_metadata,
    read_resource,
    validate_metadata,
)
from ore.skills.frontmatter import _simple_yaml

GOOD = "name: {name}\ndescription: Does {name} things.\n"


def make_skill(
    root: Path, name: str, front: str | None = None, body: str = "Do it well.\n"
) -> Path:
    folder = root / name
    folder.mkdir(parents=True)
    front = GOOD.format(name=name) if front is None else front
    (folder / "SKILL.md").write_text(f"---\n{front}---\n{body}", encoding="utf-8")
    return folder


def rchar() -> int | None:
    """Bytes this process has read so far (Linux), or None where that is not available."""
    try:
        with open("/proc/self/io", encoding="ascii") as f:
            return int(next(line for line in f if line.startswith("rchar:")).split()[1])
    except OSError:
        return None


# -- metadata and validation --------------------------------------------------------------------


def test_every_spec_field_is_read(tmp_path: Path) -> None:
    front = (
        "name: pdf-tools\n"
        "description: Extract text from PDFs.\n"
        "license: Apache-2.0\n"
        "compatibility: Needs poppler-utils\n"
        "metadata:\n  author: example-org\n  version: '1.0'\n  hints: pdf text, extract pdf\n"
        "allowed-tools: Bash(pdftotext:*) Read\n"
        "hints:\n  - read pdf\n  - pdf text\n"
    )
    meta = read_metadata(make_skill(tmp_path, "pdf-tools", front))
    assert meta.name == "pdf-tools" and meta.description == "Extract text from PDFs."
    assert (meta.license, meta.compatibility) == ("Apache-2.0", "Needs poppler-utils")
    assert meta.metadata["version"] == "1.0"
    assert meta.allowed_tools == ("Bash(pdftotext:*)", "Read")
    assert meta.hints == ("read pdf", "pdf text", "extract pdf")
    assert meta.path == str(tmp_path / "pdf-tools")


@pytest.mark.parametrize(
    "front, problem",
    [
        ("name: -bad\ndescription: d\n", "invalid name"),
        ("name: ../up\ndescription: d\n", "invalid name"),
        ("name: a b\ndescription: d\n", "not a safe folder name"),
        ("name: .hidden\ndescription: d\n", "not a safe folder name"),
        (f"name: {'a' * 101}\ndescription: d\n", "not a safe folder name"),
        ("name: 3\ndescription: d\n", "'name' is missing"),
        ("description: d\n", "'name' is missing"),
        ("name: skill\n", "'description' is missing"),
        ("name: skill\ndescription: '   '\n", "'description' is missing"),
        ("name: skill\ndescription: [unclosed\n", "bad YAML"),
        ("- just\n- a list\n", "not a mapping"),
        ("", "empty"),
    ],
)
def test_an_unsafe_or_unreadable_skill_is_a_skill_error_naming_the_file_and_problem(
    tmp_path: Path, front: str, problem: str
) -> None:
    folder = make_skill(tmp_path, "skill", front)
    with pytest.raises(SkillError) as info:
        read_metadata(folder)
    assert problem in info.value.message
    assert info.value.message.startswith(str(folder / "SKILL.md"))
    assert "\n" not in info.value.message


@pytest.mark.parametrize(
    "front, deviation",
    [
        ("name: Bad\ndescription: d\n", "has capitals"),
        ("name: bad-\ndescription: d\n", "a leading or trailing '-'"),
        ("name: b--ad\ndescription: d\n", "'--'"),
        ("name: b_ad\ndescription: d\n", "characters other than letters, digits and '-'"),
        (f"name: {'a' * 65}\ndescription: d\n", "65 characters, over the spec's 64"),
        ("name: other\ndescription: d\n", "does not match its folder 'skill'"),
        (f"name: skill\ndescription: {'d' * 1025}\n", "1025 characters, over the spec's 1024"),
        ("name: skill\ndescription: d\ncompatibility: ''\n", "1-500"),
        (f"name: skill\ndescription: d\ncompatibility: {'c' * 501}\n", "1-500"),
        ("name: skill\ndescription: d\nmetadata:\n  version: 1.0\n", "strings to strings"),
        ("name: skill\ndescription: d\nmetadata: [a]\n", "strings to strings"),
        ("name: skill\ndescription: d\nallowed-tools: [a, b]\n", "space-separated"),
        ("name: skill\ndescription: d\nhints: read file\n", "upstream ORE's"),
        ("name: skill\ndescription: d\nversion: '2'\n", "unknown top-level field 'version'"),
        ("name: skill\ndescription: d\nlicense: 3\n", "'license' must be a string"),
    ],
)
def test_a_spec_deviation_still_loads_and_is_reported(
    tmp_path: Path, front: str, deviation: str
) -> None:
    name = front.split("\n")[0].removeprefix("name: ")
    folder = make_skill(tmp_path, "skill" if "folder" in deviation else name, front)
    meta, deviations = inspect_skill(folder)
    assert meta.name == name
    assert len(deviations) == 1 and deviation in deviations[0], deviations
    assert activate(meta).instructions == "Do it well."


def test_stray_yaml_values_are_read_as_the_text_they_were_written_as() -> None:
    meta = validate_metadata(
        {
            "name": "s",
            "description": "d",
            "license": 3,
            "metadata": {"version": 1.0, "beta": True, "when": datetime.date(2024, 1, 2)},
            "allowed-tools": ["Read", "Grep"],
            "hints": "one, two",
        },
        "s",
    )
    assert meta.license == "3"
    assert dict(meta.metadata) == {"version": "1.0", "beta": "true", "when": "2024-01-02"}
    assert meta.allowed_tools == ("Read", "Grep")
    assert meta.hints == ("one", "two")


def test_a_conforming_skill_has_no_deviations(tmp_path: Path) -> None:
    assert inspect_skill(make_skill(tmp_path, "skill"))[1] == ()


@pytest.mark.parametrize(
    "content, problem",
    [
        ("no frontmatter here\n", "does not start with a '---'"),
        ("---\nname: skill\ndescription: d\n", "no closing '---'"),
        ("---\nname: skill\ndescription: d\n" + "x: y\n" * (FRONTMATTER_LIMIT // 4), "no closing"),
    ],
    ids=["no-fence", "unclosed", "too-long"],
)
def test_frontmatter_must_be_fenced(tmp_path: Path, content: str, problem: str) -> None:
    (tmp_path / "skill").mkdir()
    (tmp_path / "skill" / "SKILL.md").write_text(content, encoding="utf-8")
    with pytest.raises(SkillError, match=problem):
        read_metadata(tmp_path / "skill")


def test_crlf_and_a_byte_order_mark_are_accepted(tmp_path: Path) -> None:
    (tmp_path / "skill").mkdir()
    text = "\ufeff---\r\nname: skill\r\ndescription: d\r\n---\r\nbody\r\n"
    (tmp_path / "skill" / "SKILL.md").write_bytes(text.encode("utf-8"))
    assert read_metadata(tmp_path / "skill").name == "skill"
    assert activate(read_metadata(tmp_path / "skill")).instructions == "body"


def test_hints_from_both_forms_merge_without_repeats() -> None:
    meta = validate_metadata(
        {"name": "s", "description": "d", "hints": ["a", "b"], "metadata": {"hints": "b, c,,"}}, "s"
    )
    assert meta.hints == ("a", "b", "c")


# -- level 1: frontmatter only ------------------------------------------------------------------


@pytest.mark.invariant
def test_listing_reads_only_the_frontmatter_never_the_body(tmp_path: Path) -> None:
    """Bodies of 1 GiB each (sparse files) would take seconds to read; listing takes
    milliseconds, and on Linux the process's read counter proves how little was read."""
    for i in range(20):
        folder = make_skill(tmp_path, f"skill-{i}", body="")
        with open(folder / "SKILL.md", "r+b") as f:
            f.truncate(2**30)
    before, start = rchar(), time.perf_counter()
    catalog = discover_skills([tmp_path])
    elapsed, after = time.perf_counter() - start, rchar()
    assert len(catalog.skills) == 20 and not catalog.problems
    assert elapsed < 2.0
    if before is not None and after is not None:
        assert after - before < 20 * 8192


def test_a_body_that_is_not_text_does_not_matter_for_listing(tmp_path: Path) -> None:
    folder = make_skill(tmp_path, "skill")
    with open(folder / "SKILL.md", "ab") as f:
        f.write(b"\xff\xfe\x00binary body")
    assert read_metadata(folder).name == "skill"
    with pytest.raises(SkillError, match="not UTF-8"):
        activate(read_metadata(folder))


# -- level 2: instructions ----------------------------------------------------------------------


def test_activation_gives_the_body_without_the_frontmatter(tmp_path: Path) -> None:
    folder = make_skill(tmp_path, "skill", body="\n# Steps\n\n1. Be brief.\n")
    active = activate(read_metadata(folder))
    assert (active.name, active.instructions) == ("skill", "# Steps\n\n1. Be brief.")


def test_an_oversized_skill_file_is_refused_on_activation(tmp_path: Path) -> None:
    folder = make_skill(tmp_path, "skill", body="x" * (300 * 1024))
    with pytest.raises(SkillError, match="larger than"):
        activate(read_metadata(folder))


# -- level 3: resources -------------------------------------------------------------------------


@pytest.fixture
def skill_with_resources(tmp_path: Path) -> Path:
    folder = make_skill(tmp_path / "skills", "skill")
    (folder / "references").mkdir()
    (folder / "references" / "style.md").write_text("Use short sentences.", encoding="utf-8")
    (folder / "assets").mkdir()
    (folder / "assets" / "template.txt").write_text("TEMPLATE", encoding="utf-8")
    (folder / "assets" / "logo.png").write_bytes(b"\x89PNG\r\n\x1a\n\x00\x00")
    (folder / "resources").mkdir()
    (folder / "resources" / "big.txt").write_text("x" * (RESOURCE_LIMIT + 1), encoding="utf-8")
    (tmp_path / "secret.txt").write_text("TOP SECRET", encoding="utf-8")
    return folder


def test_resources_are_not_loaded_unless_asked_for(skill_with_resources: Path) -> None:
    active = activate(read_metadata(skill_with_resources))
    assert "short sentences" not in active.instructions


def test_a_resource_asked_for_by_path_or_bare_name_follows_the_instructions(
    skill_with_resources: Path,
) -> None:
    meta = read_metadata(skill_with_resources)
    active = activate(meta, ["references/style.md", "template.txt"])
    assert active.instructions == (
        "Do it well.\n\n[Resource:references/style.md]\nUse short sentences."
        "\n\n[Resource:assets/template.txt]\nTEMPLATE"
    )


def test_resource_names_are_listed_without_reading_them(skill_with_resources: Path) -> None:
    assert list_resources(read_metadata(skill_with_resources)) == (
        "references/style.md",
        "assets/logo.png",
        "assets/template.txt",
        "resources/big.txt",
    )


@pytest.mark.invariant
@pytest.mark.parametrize(
    "name",
    [
        "../secret.txt",
        "references/../../../secret.txt",
        "references/../SKILL.md",
        "{outside}/secret.txt",
        "references/outlink",
        "escape/secret.txt",
        "references/dirlink/secret.txt",
        "..\\..\\secret.txt",
        "",
        "SKILL.md/x",
    ],
)
def test_a_resource_can_never_come_from_outside_the_skill_folder(
    skill_with_resources: Path, name: str
) -> None:
    outside = skill_with_resources.parent.parent
    (skill_with_resources / "references" / "outlink").symlink_to(outside / "secret.txt")
    (skill_with_resources / "references" / "dirlink").symlink_to(outside)
    (skill_with_resources / "escape").symlink_to(outside)
    meta = read_metadata(skill_with_resources)
    with pytest.raises(SkillError) as info:
        read_resource(meta, name.format(outside=outside))
    assert "TOP SECRET" not in info.value.message
    assert "\n" not in info.value.message


@pytest.mark.parametrize(
    "name, problem",
    [("logo.png", "binary"), ("big.txt", "larger than"), ("nope.md", "has no resource")],
)
def test_binary_large_or_missing_resources_are_refused(
    skill_with_resources: Path, name: str, problem: str
) -> None:
    with pytest.raises(SkillError, match=problem):
        read_resource(read_metadata(skill_with_resources), name)


def test_a_missing_resource_error_lists_what_exists(skill_with_resources: Path) -> None:
    with pytest.raises(SkillError, match=r"references/style\.md"):
        read_resource(read_metadata(skill_with_resources), "nope.md")


# -- discovery ----------------------------------------------------------------------------------


def test_a_user_skill_shadows_a_bundled_one_of_the_same_name(tmp_path: Path) -> None:
    user, bundled = tmp_path / "user", tmp_path / "bundled"
    make_skill(user, "review-diff", "name: review-diff\ndescription: Mine.\n")
    make_skill(bundled, "review-diff")
    make_skill(bundled, "other")
    catalog = discover_skills([user, bundled])
    assert catalog.skills["review-diff"].description == "Mine."
    assert sorted(catalog.skills) == ["other", "review-diff"]
    assert find_skill("review-diff", [user, bundled]).description == "Mine."


@pytest.mark.invariant
def test_a_malformed_skill_is_skipped_with_one_warning_and_the_others_still_load(
    tmp_path: Path,
) -> None:
    make_skill(tmp_path, "alpha")
    make_skill(tmp_path, "broken", "name: broken\ndescription: [oops\n")
    make_skill(tmp_path, "zulu")
    (tmp_path / "not-a-skill").mkdir()  # no SKILL.md: passed over silently
    warnings: list[str] = []
    catalog = discover_skills([tmp_path], warn=warnings.append)
    assert sorted(catalog.skills) == ["alpha", "zulu"]
    assert len(warnings) == 1 and "\n" not in warnings[0]
    assert str(tmp_path / "broken" / "SKILL.md") in warnings[0] and "bad YAML" in warnings[0]


def test_activating_a_malformed_skill_by_name_says_why(tmp_path: Path) -> None:
    make_skill(tmp_path, "broken", "name: -Broken\ndescription: d\n")
    with pytest.raises(SkillError, match=r"skill 'broken' is malformed: .*invalid name"):
        find_skill("broken", [tmp_path])
    with pytest.raises(SkillError, match="malformed"):
        discover_skills([tmp_path]).get("broken")


@pytest.mark.parametrize("name", ["nope", "../etc", "/abs", "a/../../b"])
def test_an_unknown_skill_lists_the_available_ones(tmp_path: Path, name: str) -> None:
    make_skill(tmp_path, "alpha")
    with pytest.raises(SkillError, match=r"unknown skill .*available skills are alpha"):
        find_skill(name, [tmp_path])


def test_a_skill_answers_to_its_name_in_any_case_not_to_its_folder(tmp_path: Path) -> None:
    make_skill(tmp_path, "pirate-skill", "name: Pirate\ndescription: Talk like a pirate.\n")
    catalog = discover_skills([tmp_path])
    assert list(catalog.skills) == ["Pirate"]
    assert catalog.get("Pirate") is catalog.get("pirate") is catalog.get("PIRATE")
    assert find_skill("pirate", [tmp_path]).name == "Pirate"
    with pytest.raises(
        SkillError, match=r"the skill in the folder pirate-skill is called 'Pirate'"
    ):
        find_skill("pirate-skill", [tmp_path])


def test_a_user_skill_shadows_a_bundled_one_by_name_whatever_its_folder(tmp_path: Path) -> None:
    user, bundled = tmp_path / "user", tmp_path / "bundled"
    make_skill(user, "my-summary", "name: Summarise\ndescription: Mine.\n")
    make_skill(bundled, "summarise")
    catalog = discover_skills([user, bundled])
    assert list(catalog.skills) == ["Summarise"] and catalog.get("summarise").description == "Mine."
    assert not catalog.problems


def test_a_broken_user_skill_is_reported_rather_than_silently_replaced(tmp_path: Path) -> None:
    user, bundled = tmp_path / "user", tmp_path / "bundled"
    make_skill(user, "summarise", "name: summarise\ndescription: [oops\n")
    make_skill(bundled, "summarise")
    with pytest.raises(SkillError, match=r"malformed: .*bad YAML"):
        find_skill("summarise", [user, bundled])


def test_a_second_skill_with_a_taken_name_in_one_folder_is_refused(tmp_path: Path) -> None:
    make_skill(tmp_path, "a", "name: same\ndescription: First.\n")
    make_skill(tmp_path, "b", "name: Same\ndescription: Second.\n")
    warnings: list[str] = []
    catalog = discover_skills([tmp_path], warn=warnings.append)
    assert catalog.get("same").description == "First."
    assert len(warnings) == 1 and "already called 'Same'" in warnings[0]


def test_a_missing_skills_folder_is_simply_empty(tmp_path: Path) -> None:
    catalog = discover_skills([tmp_path / "nowhere"])
    assert not catalog.skills and not catalog.problems


def test_the_bundled_skills_are_found_valid_and_useful() -> None:
    root = bundled_skills_dir()
    assert root is not None
    catalog = discover_skills([root])
    assert not catalog.problems
    assert {"summarise", "review-diff", "explain-code"} <= set(catalog.skills)
    for meta in catalog.skills.values():
        assert len(meta.hints) >= 3 and meta.license
        assert len(activate(meta).instructions) > 200


def test_user_skills_live_under_ore_home(tmp_path: Path) -> None:
    make_skill(tmp_path / "skills", "mine")  # ORE_HOME is tmp_path in every test
    assert "mine" in discover_skills().skills
    assert "summarise" in discover_skills().skills


# -- the frontmatter parser ---------------------------------------------------------------------


@given(st.text(max_size=300))
def test_parsing_any_text_gives_a_dict_or_a_skill_error(text: str) -> None:
    try:
        assert isinstance(parse_frontmatter(text), dict)
    except SkillError as exc:
        assert "\n" not in exc.message


# Values that are mostly plain strings, salted with what YAML treats specially.
_tricky = "abcXYZ é中 '\"{}[],&*!|>%@`?-:#~.0123456789_"
values = st.one_of(
    st.tuples(st.sampled_from("aZéx中"), st.text(alphabet=_tricky, max_size=10)).map("".join),
    st.sampled_from(["yes", "No", "null", "true", "On", "~", "1.0", "2024-01-01", "a: b", "x #c"]),
    st.text(max_size=6),
)
keys = st.sampled_from(["name", "description", "hints", "metadata", "x-y", "On", "yes", "a_b"])
indents = st.sampled_from([" ", "  ", "  ", "    "])
items = st.tuples(indents, values).map(lambda t: f"{t[0]}- {t[1]}")
subkeys = st.tuples(indents, keys, values).map(lambda t: f"{t[0]}{t[1]}: {t[2]}")
blocks = st.tuples(keys, st.lists(items, max_size=3) | st.lists(subkeys, max_size=3)).map(
    lambda t: "\n".join([f"{t[0]}:", *t[1]])
)
entries = st.one_of(
    st.tuples(keys, values).map(lambda t: f"{t[0]}: {t[1]}"), blocks, st.just(""), values
)


@settings(max_examples=1000)
@given(st.lists(entries, max_size=6).map("\n".join))
def test_the_fast_reader_agrees_with_pyyaml_whenever_it_answers(text: str) -> None:
    fast = _simple_yaml(text)
    if fast is not None:
        assert fast == yaml.safe_load(text)


@given(st.text(max_size=200))
def test_the_fast_reader_agrees_with_pyyaml_on_any_text(text: str) -> None:
    fast = _simple_yaml(text)
    if fast is not None:
        assert fast == yaml.safe_load(text)


@settings(suppress_health_check=[HealthCheck.function_scoped_fixture], max_examples=150)
@given(
    content=st.binary(max_size=300) | st.text(max_size=300).map(lambda t: ("---\n" + t).encode())
)
def test_reading_any_skill_file_gives_metadata_or_a_skill_error(
    tmp_path: Path, content: bytes
) -> None:
    folder = tmp_path / "skill"
    folder.mkdir(exist_ok=True)
    (folder / "SKILL.md").write_bytes(content)
    try:
        read_metadata(folder)
    except SkillError as exc:
        assert "\n" not in exc.message


def test_a_fifo_skill_file_does_not_hang_listing(tmp_path: Path) -> None:
    (tmp_path / "skill").mkdir()
    os.mkfifo(tmp_path / "skill" / "SKILL.md")
    catalog = discover_skills([tmp_path])
    assert "not a regular file" in catalog.problems["skill"]


def test_resources_deeper_than_the_recursion_limit_are_listed(tmp_path: Path) -> None:
    folder = make_skill(tmp_path / "skills", "deep")
    where = folder / "references"
    where.mkdir()
    depth = sys.getrecursionlimit() + 100
    for _ in range(depth):  # os.walk (and os.makedirs) recurse
        where /= "d"
        where.mkdir()
    (where / "x.md").write_text("deep\n", encoding="utf-8")
    (folder / "references" / "top.md").write_text("top\n", encoding="utf-8")
    try:
        names = list_resources(find_skill("deep", [tmp_path / "skills"]))
    finally:  # shutil.rmtree recurses too: pytest could not remove this folder later
        subprocess.run(["rm", "-rf", str(folder / "references" / "d")], check=True)
    assert names == ("references/top.md", "references/" + "d/" * depth + "x.md")
