"""`similar`'s noise classes found by hand on code nobody tuned for (paramiko 5.1.0 and boltons
26.2.0, seed 2611: `bench/judgment_samples/heldout_2611.jsonl`), each as a small fixture of the
same kind: a catch-all parameter taken for a likeness, two words folded into one, a tie of
equal shapes broken by path rather than by what the code says. Each test failed on the code
before its rule."""

from __future__ import annotations

from pathlib import Path

import pytest
from _trees import write_tree

from ore.graph import open_graph

CATCH_ALLS = {
    "stats.py": (
        "class Stats:\n"
        "    def get_histogram_counts(self, bins=None, **kw):\n"
        "        counts = [bins, kw]\n"
        "        return counts\n\n"
        "    def format_histogram(self, bins=None, **kw):\n"
        "        text = str(bins)\n"
        "        return text\n"
    ),
    "dicts.py": (
        "class FrozenDict(dict):\n"
        "    def __new__(cls, *a, **kw):\n"
        "        made = dict.__new__(cls)\n"
        "        return made\n\n"
        "    def updated(self, *a, **kw):\n"
        "        copy = dict(self)\n"
        "        return copy\n"
    ),
}


def test_a_catch_all_parameter_is_no_likeness(tmp_path: Path) -> None:
    """boltons: 9 of 10 answers for `get_histogram_counts(self, bins=None, **kw)` shared only
    `**kw` (`__new__(cls, *a, **kw)`, ...); the one sibling shares `bins`."""
    g = open_graph(write_tree(tmp_path / "lib", CATCH_ALLS), jobs=1)
    rows = g.similar("get_histogram_counts", mode="signature")
    assert [r.name for r in rows] == ["format_histogram"]
    assert rows[0].reason.startswith("2 parameters, shares bins")  # not "bins, kw"


FOLDED = {
    "keys.py": (
        "class Key:\n"
        "    def can_verify(self):\n        return True\n\n"
        "    def can_sign(self):\n        return False\n\n"
        "    def check(self, data):\n        return data\n\n"
        "    def is_valid(self):\n        return True\n\n"
        "    def validate(self, data):\n        return data\n"
    ),
    "other.py": "class Other:\n    def can_sign(self):\n        return True\n",
    "blobs.py": "".join(
        f"def {verb}_{thing}(data):\n    return data\n\n\n"
        for verb in ("sign", "verify", "pack", "unpack", "send", "open")
        for thing in ("data", "blob", "packet", "message")
    ),
}


def test_a_name_whose_words_fold_together_is_compared_word_for_word(tmp_path: Path) -> None:
    """paramiko: `similar can_verify` folded can and verify into one family (is), so every
    `check` and `_check` came first at 1.0 ("shares is") and the four `can_sign` siblings sixth
    to ninth."""
    g = open_graph(write_tree(tmp_path / "lib", FOLDED), jobs=1)
    rows = g.similar("can_verify")
    said = [(r.name, r.reason.removesuffix(", same module")) for r in rows]
    assert [name for name, why in said if why == "shares can"] == ["can_sign", "can_sign"]
    assert {why for _name, why in said} == {"shares can", "shares verify"}
    assert not {"check", "is_valid", "validate"} & {r.name for r in rows}


GETTERS = {
    "aaa_winapi.py": (
        "class Handle:\n"
        "    def message(self):\n        return self._message\n\n"
        "    def code(self):\n        return self._code\n"
    ),
    "agent.py": (
        "class AgentSSH:\n"
        "    def get_keys(self):\n"
        '        """The keys the agent offered; no round trip, the cached tuple."""\n'
        "        return self._keys\n\n"
        "    def get_name(self):\n        return self._name\n"
    ),
}
RENAMED_GETTER = (
    "class AgentConnection:\n"
    "    def fetch_agent_keys(self) -> tuple:\n"
    '        """Give back every key the running agent offered when we connected."""\n'
    "        return self._keys\n"
)


def test_equal_shapes_are_ordered_by_the_words_they_share(tmp_path: Path) -> None:
    """paramiko: a renamed copy of the one-line `get_keys` tied at 1.0 with every getter, and
    four `_winapi.py` getters came first by path; the original is the one whose names and
    docstring still say what the copy says."""
    g = open_graph(write_tree(tmp_path / "lib", GETTERS), jobs=1)
    rows = g.similar(snippet=RENAMED_GETTER, mode="shape")
    assert [r.score for r in rows] == [1.0] * 4
    assert (rows[0].name, rows[0].path) == ("get_keys", "agent.py")
    by_name = g.similar("get_keys", mode="shape")  # a name anchor reads its own text
    assert by_name[0].score == 1.0
    found = g.duplicates_of(RENAMED_GETTER)  # `duplicates --snippet`: the same order of ties
    assert {m.score for m in found} == {0.8}
    assert (found[0].name, found[0].path) == ("get_keys", "agent.py")


PLACES = {
    "lib/hostkeys.py": (
        "class HostKeys:\n"
        "    def load(self, filename):\n        return filename\n\n"
        "    def save(self, filename):\n        return filename\n\n"
        "    def lookup(self, hostname):\n        return hostname\n"
    ),
    "lib/sftp_handle.py": (
        "class SFTPHandle:\n"
        "    def read(self, offset, length):\n        return offset\n\n"
        "    def write(self, offset, data):\n        return data\n"
    ),
    "lib/file.py": (
        "class BufferedFile:\n"
        "    def read(self, size):\n        return size\n\n"
        "    def write(self, data):\n        return data\n\n"
        "    def readline(self):\n        return None\n\n"
        "    def writelines(self, lines):\n        return lines\n"
    ),
    "lib/client.py": (
        "class SSHClient:\n"
        "    def load_host_keys(self, filename):\n        return filename\n\n"
        "    def get_host_keys(self):\n        return None\n"
    ),
    "lib/pkey.py": (
        "class PKey:\n"
        "    def write_private_key(self, f):\n        return f\n\n"
        "    def get_name(self):\n        return None\n"
    ),
    "lib/ssh_exception.py": "class BadHostKeyException(Exception):\n    pass\n",
}


def test_a_compound_file_name_is_covered_by_a_three_letter_term_beside_a_longer_one(
    tmp_path: Path,
) -> None:
    """paramiko: "read and write the known_hosts file of host keys" put `hostkeys.py` fifth,
    under files sharing only read and write: `key` (three letters) could not help `host` cover
    the name. A three-letter term alone still covers nothing (`dat` is not `data`)."""
    from ore.graph.judgment.terms import description_terms, name_coverage

    g = open_graph(write_tree(tmp_path / "proj", PLACES), jobs=1)
    files = g.place("read and write the known_hosts file of host keys").files
    assert files[0].path == "lib/hostkeys.py"
    terms = set(description_terms("parse and format HTTP dates"))
    assert name_coverage("shared_data", terms) == (0.0, [])


OFFERS = {
    "pkg/__init__.py": (
        "from pkg.client import Client, Policy\nfrom .transport import Transport\n"
        "import os\n\n__version__ = '1'\n"
    ),
    "pkg/common.py": (
        "import struct\n\n\ndef byte_ord(c):\n    return c\n\n\n"
        + "".join(f"MSG_{word} = {n}\n" for n, word in enumerate(("HELLO", "BYE", "DATA", "EOF")))
        + "SSH_PORT = 22\n"
    ),
    "pkg/client.py": (
        "from pkg.common import MSG_HELLO, SSH_PORT, byte_ord\n\n\n"
        "class Client:\n    pass\n\n\nclass Policy:\n    pass\n"
    ),
    "pkg/transport.py": "from pkg.common import MSG_DATA\n\n\nclass Transport:\n    pass\n",
    "app.py": "from pkg import Client, Transport\nfrom pkg.common import MSG_BYE\n",
}


def test_the_signature_says_what_a_constants_module_and_an_entry_file_offer(
    tmp_path: Path,
) -> None:
    """paramiko: `common.py` (35 dependents, who import its `MSG_*` constants) was shown as
    `byte_chr, byte_mask, byte_ord`, and the package's `__init__.py` with no names at all."""
    g = open_graph(write_tree(tmp_path / "proj", OFFERS), jobs=1)
    lines = g.signature(level="standard").text.splitlines()
    common = next(line for line in lines if "pkg/common.py (" in line)
    assert common.endswith(": byte_ord, MSG_* (4), SSH_PORT")
    entry = next(line for line in lines if "pkg/__init__.py (" in line)
    assert entry.endswith(": Client, Policy, Transport")


_PARAGRAPH = (
    '    """Receive bytes from the socket.\n\n'
    "    If the appropriate number of bytes cannot be fetched from the\n"
    "    buffer and socket before *timeout* expires, then a\n"
    "    :exc:`Timeout` will be raised. If the connection is closed, a\n"
    "    :exc:`ConnectionClosed` will be raised, and the buffer is kept\n"
    "    for the next caller to read from, as it was before this call.\n"
    '    """\n'
)
_CODE = (
    "    total = 0\n"
    "    for chunk in chunks:\n"
    "        total += len(chunk)\n"
    "        if total > limit:\n"
    "            raise ValueError(limit)\n"
    "    return total\n"
)
PROSE = {
    "net/recv.py": "def recv_until(sock, marker):\n" + _PARAGRAPH + "    return sock\n",
    "net/size.py": "def recv_size(sock, size):\n" + _PARAGRAPH + "    return size\n",
    "net/count.py": "def count(chunks, limit):\n" + _CODE,
    "net/tally.py": "def tally(chunks, limit):\n" + _CODE,
}


def test_a_paragraph_repeated_in_docstrings_comes_after_copied_code(tmp_path: Path) -> None:
    """paramiko and boltons: four of ten noise answers in the first tens were docstring
    paragraphs repeated between methods, listed above copied code for their many tokens. They
    stay answers (a copy is a copy), after the code of the same level."""
    g = open_graph(write_tree(tmp_path / "lib", PROSE), jobs=1)
    groups = g.duplicates(min_lines=4)
    firsts = [{o.path for o in c.occurrences} for c in groups]
    assert firsts.index({"net/count.py", "net/tally.py"}) < firsts.index(
        {"net/recv.py", "net/size.py"}
    )


# -- the second held-out sample (tornado 6.6.1, babel 2.18.0; seed 4417) ----------------------

COUNTS = {
    "web.py": (
        "class Request:\n"
        "    def request_time(self) -> float:\n        return self._finish - self._start\n\n"
        "    def finish(self) -> None:\n        self._done = True\n\n"
        "    def ping_interval(self) -> float:\n        return self.settings.get('ping')\n"
    ),
    "paths.py": (
        "def shortest(graph, source, target):\n"
        "    pred, succ, w = graph, source, target\n    return pred, succ, w\n\n\n"
        "def meet_in_middle(net, start, goal):\n"
        "    a, b, c = net, start, goal\n    return a, b, c\n\n\n"
        "def render(text, width, height):\n    return print(text, width, height)\n"
    ),
}


def test_only_as_many_parameters_is_no_likeness(tmp_path: Path) -> None:
    """tornado: `request_time(self) -> float` listed every method of no parameter (ping_interval,
    get_nowait, finish ...): two empty lists share nothing, and with no parameter in common only
    a return of its own (not a call, a name or None) makes a likeness. A renamed copy that
    returns the same three-tuple is still found."""
    g = open_graph(write_tree(tmp_path / "lib", COUNTS), jobs=1)
    assert g.similar("request_time", mode="signature") == []
    found = [r.name for r in g.similar("shortest", mode="signature")]
    assert found == ["meet_in_middle"]  # render takes three too, and returns a call


OVERLOADS = {
    "lib/numbers.py": (
        "from typing import overload\n\n\n"
        "@overload\ndef get_currencies(territory: str, tender: bool) -> list[str]: ...\n"
        "@overload\ndef get_currencies(territory: str, tender: None) -> list[str]: ...\n"
        "def get_currencies(territory, tender=True):\n    return [territory, tender]\n\n\n"
        "def get_symbols(territory: str, tender: bool = True) -> list[str]:\n"
        "    return [territory, tender]\n"
    ),
    "tests/test_numbers.py": ("def get_currencies(territory, tender):\n    return [territory]\n"),
}


def test_a_name_stands_for_its_library_implementation_not_its_stubs_nor_its_test(
    tmp_path: Path,
) -> None:
    """tornado: `similar get_app --mode signature` compared with the test module's `get_app`;
    babel: `get_territory_currencies` with its first `@overload`, and its own second overload
    and implementation came first."""
    g = open_graph(write_tree(tmp_path / "proj", OVERLOADS), jobs=1)
    rows = g.similar("get_currencies", mode="signature")
    places = [(r.path, r.line) for r in rows]
    assert not {("lib/numbers.py", 5), ("lib/numbers.py", 7), ("lib/numbers.py", 8)} & set(places)
    assert places[0] == ("lib/numbers.py", 12)  # get_symbols, then the test's namesake
    assert ("tests/test_numbers.py", 1) in places


_PARAMS = (
    "    number: float,\n    format: str | None = None,\n    locale: str | None = None,\n"
    "    decimal_quantization: bool = True,\n    group_separator: bool = True,\n"
)
HEADERS = {
    "fmt/numbers.py": (
        "def format_decimal(\n" + _PARAMS + ') -> str:\n    """Format a decimal number."""\n'
        "    locale = parse(locale)\n    return str(round(number, 2)) + locale\n\n\n"
        "def format_percent(\n" + _PARAMS + ') -> str:\n    """Format a percent value."""\n'
        "    locale = parse(locale)\n    pattern = locale.percent_formats[None]\n"
        "    return pattern.apply(number * 100, group_separator)\n"
    ),
    "fmt/count.py": "def count(chunks, limit):\n" + _CODE,
    "fmt/tally.py": "def tally(chunks, limit):\n" + _CODE,
}


def test_a_parameter_list_repeated_comes_after_copied_code(tmp_path: Path) -> None:
    """babel: `format_decimal` and `format_percent` share their parameter list, docstring shape
    and first body line (57 lines as one renamed group), and such groups filled two of the
    first ten; a signature repeated is an interface, listed after copied code."""
    g = open_graph(write_tree(tmp_path / "lib", HEADERS), jobs=1)
    groups = g.duplicates(min_lines=4)
    firsts = [{o.path for o in c.occurrences} for c in groups]
    assert {"fmt/numbers.py"} in firsts  # still an answer
    assert firsts.index({"fmt/count.py", "fmt/tally.py"}) < firsts.index({"fmt/numbers.py"})


NAMED_LOGGERS = {
    "srv/log.py": (
        "import logging\n\ngen_log = logging.getLogger('srv.general')\n"
        "app_log = logging.getLogger('srv.application')\n"
    ),
    **{
        f"srv/mod{i}.py": (
            "from srv.log import app_log, gen_log\n\n\n"
            f"def handle{i}(request):\n"
            "    try:\n        return request.run()\n"
            "    except OSError as e:\n"
            "        gen_log.warning('failed: %s', e)\n"
            "        app_log.error('request failed')\n"
            "        return None\n"
        )
        for i in range(5)
    },
}
SLOPPY = "def load(path):\n    print('loading', path)\n    return open(path).read()\n"


def test_a_logger_named_like_gen_log_is_logging(tmp_path: Path) -> None:
    """tornado logs through `gen_log`, `app_log` and `access_log` (68 calls in 17 files): the
    only logging `conventions` saw was `warnings.warn()`, and `print()` in new code was no
    deviation. A level method of any name ending in `_log` or `_logger` is a logging call."""
    g = open_graph(write_tree(tmp_path / "proj", NAMED_LOGGERS), jobs=1)
    (logging,) = [c for c in g.conventions() if c.topic == "logging"]
    assert {p.name for p in logging.patterns} >= {"gen_log.warning()", "app_log.error()"}
    said = [d for c in g.consistent(SLOPPY).criteria for d in c.deviations]
    assert any("the snippet calls print()" in d for d in said)


STREAMS = {
    "net/iostream.py": (
        "class Stream:\n"
        "    def read_until_close(self):\n        return self._read(None)\n\n"
        "    def read_until(self, delimiter):\n        return self._read(delimiter)\n\n"
        "    def read_until_regex(self, regex):\n        return self._read(regex)\n\n"
        "    def close(self):\n        self._closed = True\n\n"
        "    def on_close(self):\n        return None\n"
    ),
    "net/client.py": "class Client:\n    def close(self):\n        return None\n",
    "net/dates.py": (
        "def get_week_of_month(date):\n    return date.day // 7\n\n\n"
        "def get_week_of_year(date):\n    return date.timetuple().tm_yday // 7\n"
    ),
    "tests/test_dates.py": "".join(
        f"def test_case_{i}():\n    def week_of_month(d):\n        return d\n\n    return 1\n\n\n"
        for i in range(4)
    ),
}


def test_one_word_of_three_is_no_likeness_and_nested_helpers_are_no_answers(
    tmp_path: Path,
) -> None:
    """tornado: seven `close` and `on_close` methods answered `read_until_close` (one word of
    its three); babel: five copies of a `week_of_month` helper nested in tests answered
    `get_week_of_month`."""
    g = open_graph(write_tree(tmp_path / "proj", STREAMS), jobs=1)
    names = [r.name for r in g.similar("read_until_close")]
    assert "close" not in names and "on_close" not in names
    assert {"read_until", "read_until_regex"} <= set(names)
    weeks = [r.name for r in g.similar("get_week_of_month", include_context=True)]
    assert "week_of_month" not in weeks and "get_week_of_year" in weeks


USED = {
    "pkg/gen.py": (
        "class KeyReuseError(Exception):\n    pass\n\n\n"
        "class UnknownKeyError(Exception):\n    pass\n\n\n"
        "def coroutine(func):\n    return func\n\n\n"
        "def sleep(seconds):\n    return seconds\n"
    ),
    **{
        f"pkg/user{i}.py": (
            "from pkg.gen import coroutine, sleep\n\n\n"
            f"@coroutine\ndef task{i}():\n    return sleep(1)\n"
        )
        for i in range(3)
    },
}


def test_a_central_file_shows_its_most_used_names_first(tmp_path: Path) -> None:
    """tornado: `gen.py` (33 dependents) was shown by five internal exception classes, the
    first it defines, not by `coroutine`, `multi` and `sleep`, which its dependents use."""
    g = open_graph(write_tree(tmp_path / "proj", USED), jobs=1)
    lines = g.signature(level="standard").text.splitlines()
    gen = next(line for line in lines if "pkg/gen.py (" in line)
    assert gen.endswith(": coroutine, sleep, KeyReuseError, UnknownKeyError")


def test_a_test_of_a_sibling_is_no_answer(tmp_path: Path) -> None:
    """tornado: `similar read_until_regex` listed `test_read_until_close`,
    `test_read_until_close_with_error` and `test_future_read_until_close`, tests of its sibling
    `read_until_close`; its own tests stay."""
    tests = {
        "tests/test_iostream.py": "".join(
            f"def {name}():\n    return None\n\n\n"
            for name in (
                "test_read_until_close",
                "test_read_until_close_with_error",
                "test_read_until_regex_max_bytes",
            )
        )
    }
    g = open_graph(write_tree(tmp_path / "proj", {**STREAMS, **tests}), jobs=1)
    names = [r.name for r in g.similar("read_until_regex")]
    assert "test_read_until_regex_max_bytes" in names
    assert not {"test_read_until_close", "test_read_until_close_with_error"} & set(names)


NAMES = {
    "dates.py": (
        "def get_month_names(width='wide', context='format', locale=None):\n"
        "    return Locale.parse(locale).months[context][width]\n\n\n"
        "def get_day_names(width='wide', context='format', locale=None):\n"
        "    return Locale.parse(locale).days[context][width]\n\n\n"
        "def format_date(date=None, format='medium', locale=None):\n"
        "    return parse_pattern(format).apply(date, locale)\n"
    ),
}


def test_one_parameter_of_three_is_no_likeness(tmp_path: Path) -> None:
    """babel: `get_month_names(width, context, locale)` listed five functions sharing `locale`
    alone (`format_date`, `parse_time` ...), all returning some call."""
    g = open_graph(write_tree(tmp_path / "lib", NAMES), jobs=1)
    assert [r.name for r in g.similar("get_month_names", mode="signature")] == ["get_day_names"]


def test_a_test_copied_into_each_test_class_is_one_answer(tmp_path: Path) -> None:
    """arrow (seed 5023): `similar next_weekday` spent seven of ten places on the same
    `test_weekday` of seven locale test classes in one file."""
    locales = "".join(
        f"class Test{lang}Locale:\n    def test_weekday(self):\n"
        "        return next_weekday(1, 2)\n\n\n"
        for lang in ("English", "German", "French", "Czech")
    )
    files = {
        "arrow/util.py": "def next_weekday(start, weekday):\n    return start + weekday\n",
        "arrow/parser.py": "def parse_weekday(text):\n    return text\n",
        "tests/test_locales.py": locales,
        "arrow/other.py": "".join(f"def helper_{i}(x):\n    return x\n\n\n" for i in range(30)),
        "arrow/shift.py": "def next_day(d):\n    return d\n\n\ndef next_month(d):\n    return d\n",
        "tests/test_other.py": "".join(
            f"def test_case_{i}():\n    return 1\n\n\n" for i in range(20)
        ),
    }
    g = open_graph(write_tree(tmp_path / "proj", files), jobs=1)
    names = [r.name for r in g.similar("next_weekday")]
    assert names.count("test_weekday") == 1


def test_a_word_written_as_two_of_the_trees_words_is_those_two(tmp_path: Path) -> None:
    """arrow (seed 5023): `utctimetuple` beside `timetuple`, and the three `utcnow` beside
    `now`, were missed: `utcnow` is one word to split on case and underscores."""
    files = {
        "arrow/arrow.py": (
            "class Arrow:\n"
            "    def timetuple(self):\n        return self._dt.timetuple()\n\n"
            "    def utctimetuple(self):\n        return self._dt.utctimetuple()\n\n"
            "    def to_utc(self):\n        return self\n"
        ),
        "arrow/factory.py": (
            "class Factory:\n"
            "    def now(self, tz=None):\n        return tz\n\n"
            "    def utcnow(self):\n        return self.now('utc')\n"
        ),
        "arrow/other.py": "".join(f"def helper_{i}(x):\n    return x\n\n\n" for i in range(30)),
    }
    g = open_graph(write_tree(tmp_path / "proj", files), jobs=1)
    assert "utctimetuple" in [r.name for r in g.similar("timetuple")]
    assert "utcnow" in [r.name for r in g.similar("now")]


def _locale(name: str, w: str, method: bool) -> str:
    """A locale class in arrow's style: tables of literals, and a method if asked."""
    body = (
        "    def _format_timeframe(self, timeframe, delta):\n"
        "        form = self.timeframes[timeframe]\n"
        "        if isinstance(form, dict):\n"
        "            form = form['plural'] if delta > 4 else form['singular']\n"
        "        delta = abs(delta)\n"
        "        return form.format(delta)\n"
        if method
        else ""
    )
    return (
        f"class {name}Locale:\n"
        f"    names = ['{name.lower()}', '{name.lower()}-x']\n"
        f"    past = '{w} ago {{0}}'\n"
        f"    future = 'in {w} {{0}}'\n"
        "    timeframes = {\n"
        f"        'now': '{w}now',\n"
        f"        'seconds': {{'singular': '{w}s', 'plural': '{w}ss'}},\n"
        f"        'minute': '{w}min',\n"
        f"        'hours': {{'singular': '{w}h', 'dual': '{w}hh', 'plural': '{w}hhh'}},\n"
        f"        'day': '{w}d',\n"
        "    }\n"
        f"    month_names = ['', '{w}jan', '{w}feb', '{w}mar']\n"
        f"    day_abbreviations = ['', '{w}mo', '{w}tu']\n"
        f"    ordinal_day_re = r'((?P<value>[1-3]?[0-9](?={w})){w})'\n\n"
        f"{body}\n\n"
    )


def test_a_table_written_again_with_other_data_comes_after_copied_code(tmp_path: Path) -> None:
    """arrow (seed 5023): five of the first ten duplicates were locale tables whose every
    string differs (Macedonian against MacedonianLatin): such a renamed group follows copied
    code. A group holding a method copied between two locales (Czech's and Slovak's
    `_format_timeframe`) is copied code, however much table is around it."""
    from ore.graph.index.extract import MAX_BYTES
    from ore.graph.index.source import SourceLines
    from ore.graph.judgment.non_code import _tables_only
    from ore.graph.judgment.shapecache import load_shapes
    from ore.graph.results import CloneGroup, Occurrence

    text = (
        _locale("Macedonian", "mk", False)
        + _locale("Latin", "la", False)
        + _locale("Czech", "cs", True)
        + _locale("Slovak", "sk", True)
    )
    g = open_graph(write_tree(tmp_path / "proj", {"arrow/locales.py": text}), jobs=1)
    path = "arrow/locales.py"
    shapes = load_shapes(g, [path], lean=True)
    lines = SourceLines(g.root, limit=MAX_BYTES)
    heads = [n for n, line in enumerate(text.splitlines(), 1) if line.startswith("class ")]
    ends = [*(h - 1 for h in heads[1:]), len(text.splitlines())]

    def group(*which: int) -> CloneGroup:
        places = tuple(Occurrence(path, heads[i], ends[i]) for i in which)
        return CloneGroup("renamed", 20, 100, places)

    assert _tables_only(shapes, lines, group(0, 1))  # two tables, every string other
    assert not _tables_only(shapes, lines, group(2, 3))  # the same method in both


def test_a_method_is_named_by_its_class(tmp_path: Path) -> None:
    """marshmallow (seed 5023): `similar Nested.schema` was "no function or method named
    'Nested.schema'"; an agent names a method by its class."""
    from ore.errors import GraphError

    files = {
        "lib/fields.py": (
            "class Field:\n    def serialize(self, value, attr, obj):\n        return value\n\n\n"
            "class Nested(Field):\n    def serialize(self, nested, attr, obj):\n"
            "        return nested\n\n    def schema(self):\n        return self._schema\n"
        ),
        "lib/other.py": "def serialize(value, attr, obj):\n    return value\n",
    }
    g = open_graph(write_tree(tmp_path / "proj", files), jobs=1)
    rows = g.similar("Nested.serialize", mode="signature")
    assert ("lib/fields.py", 2) in [(r.path, r.line) for r in rows]  # Field's, not itself
    assert ("lib/fields.py", 7) not in [(r.path, r.line) for r in rows]
    with pytest.raises(GraphError, match="in a class 'Nope'"):
        g.similar("Nope.serialize", mode="signature")


def test_a_stub_beside_its_module_is_no_answer(tmp_path: Path) -> None:
    """more-itertools (seed 6131): `similar consume` answered the name asked about, through
    `recipes.pyi` ("the same name"); `place` ranked the stub above `recipes.py`, and
    `signature` listed three stubs as central files of 0 dependents."""
    body = "def consume(iterator, n=None):\n    return iterator\n\n\n"
    body += "def factor(n):\n    return [n]\n\n\ndef prime_factors(n):\n    return factor(n)\n"
    stub = "def consume(iterator, n=...): ...\ndef factor(n): ...\ndef prime_factors(n): ...\n"
    files = {
        "mi/recipes.py": body,
        "mi/recipes.pyi": stub,
        "mi/more.py": "from mi.recipes import consume\n\n\ndef consume_all(it):\n    return consume(it)\n",
    }
    g = open_graph(write_tree(tmp_path / "proj", files), jobs=1)
    assert all(r.path != "mi/recipes.pyi" for r in g.similar("consume"))
    assert all(r.reason != "the same name" for r in g.similar("consume"))
    assert g.place("prime factors of a number").files[0].path == "mi/recipes.py"
    assert "mi/recipes.pyi (" not in g.signature(level="standard").text


def test_duplicates_leave_a_stub_beside_its_module_aside_unless_it_is_named(
    tmp_path: Path,
) -> None:
    """more-itertools (seed 6131): seven of `duplicates`' first ten were `more.pyi`'s
    `@overload` ladders, parameter lists a stub repeats by design while `more.py` holds the
    code. Stubs with no module beside them (a stub-only package) are searched as before."""
    ladder = "from typing import overload\n\n" + "".join(
        f"@overload\ndef zip_broadcast{n}(a: int, b: str, c: float, *, strict: bool = ...) -> T: ...\n"
        for n in range(6)
    )
    files = {
        "mi/more.pyi": ladder,
        "mi/more.py": "def zip_broadcast(*objects, strict=False):\n    return objects\n",
        "stubs/one.pyi": ladder,
        "stubs/two.pyi": ladder,
    }
    g = open_graph(write_tree(tmp_path / "proj", files), jobs=1)
    places = {o.path for c in g.duplicates(min_tokens=10) for o in c.occurrences}
    assert places == {"stubs/one.pyi", "stubs/two.pyi"}
    named = g.duplicates(paths=["mi/more.pyi", "stubs/one.pyi"], min_tokens=10)
    assert {o.path for c in named for o in c.occurrences} == {"mi/more.pyi", "stubs/one.pyi"}


def test_a_test_answers_a_name_only_when_it_is_about_that_name(tmp_path: Path) -> None:
    """marshmallow and more-itertools (seeds 5023, 6131): tests sharing one word of the name
    asked for answered it (`PointDict`, `test_deserialize_to_dict` for `from_dict`;
    `test_equal_lengths` for `all_equal`). A test is an answer when its body names the name,
    or its own name holds every word of a name of two words or more (`test_day_of_year`
    exercises `get_day_of_year` through a format pattern)."""
    files = {
        "lib/schema.py": (
            "class Schema:\n    @classmethod\n    def from_dict(cls, fields):\n"
            "        return cls\n\n\ndef fields_from_dict(schema):\n    return schema\n"
        ),
        "lib/dates.py": "def get_day_of_year(value):\n    return value\n",
        "lib/other.py": "".join(f"def helper_{i}(x):\n    return x\n\n\n" for i in range(40)),
        "tests/test_schema.py": (
            "from lib.schema import Schema\n\n\n"
            "class TestFromDict:\n    def test_generates(self):\n"
            "        assert Schema.from_dict({})\n"
        ),
        "tests/test_fields.py": (
            "class PointDict(dict):\n    x = 1\n\n\ndef test_dict():\n    assert PointDict()\n"
        ),
        "tests/test_dates.py": (
            "def test_day_of_year():\n    assert format_pattern('D') == '91'\n"
        ),
    }
    g = open_graph(write_tree(tmp_path / "proj", files), jobs=1)
    answers = [r.name for r in g.similar("Schema.from_dict")]
    assert "TestFromDict" in answers
    assert "fields_from_dict" in answers  # library code is not held to it
    assert "PointDict" not in answers
    assert "test_dict" not in answers
    assert [r.name for r in g.similar("get_day_of_year")] == ["test_day_of_year"]


def test_the_class_that_holds_the_name_is_no_answer(tmp_path: Path) -> None:
    """pluggy (seed 6131): `similar get_result` answered `Result`, the class that holds
    `get_result`: the asker has it already. Another class of that name still answers."""
    files = {
        "lib/result.py": (
            "class Result:\n    def get_result(self):\n        return self._result\n"
        ),
        "lib/legacy.py": "class Result:\n    value = None\n",
        "lib/other.py": "".join(f"def helper_{i}(x):\n    return x\n\n\n" for i in range(30)),
    }
    g = open_graph(write_tree(tmp_path / "proj", files), jobs=1)
    answers = [(r.path, r.name) for r in g.similar("Result.get_result")]
    assert ("lib/result.py", "Result") not in answers
    assert ("lib/legacy.py", "Result") in answers


def test_a_filler_word_counts_when_the_name_has_one_other_word(tmp_path: Path) -> None:
    """marshmallow (seed 5023): `similar from_dict` put the `Dict` field first at 1.0: with
    `from` dropped as filler its one word was `dict`. A name of a filler word and one other
    is scored with both, and a candidate still needs the other one."""
    files = {
        "lib/schema.py": (
            "class Schema:\n    @classmethod\n    def from_dict(cls, fields):\n"
            "        return cls\n\n    def to_dict(self):\n        return {}\n\n\n"
            "def load_from_dict(data):\n    return data\n\n\n"
            "def from_timestamp(value):\n    return value\n"
        ),
        "lib/fields.py": "class Dict:\n    pass\n",
        "lib/other.py": "".join(f"def helper_{i}(x):\n    return x\n\n\n" for i in range(30)),
    }
    g = open_graph(write_tree(tmp_path / "proj", files), jobs=1)
    rows = g.similar("Schema.from_dict")
    assert rows[0].name == "load_from_dict"
    assert next(r for r in rows if r.name == "Dict").score < 1.0
    assert "from_timestamp" not in [r.name for r in rows]


def test_place_leaves_out_files_far_below_the_best(tmp_path: Path) -> None:
    """boltons and tornado (seeds 2611, 4417): after the owner, `place` listed files sharing
    one word of the description (`ioutils.py` for "write a file atomically ...": `write`).
    A file under a third of the best score is no answer; the owner stays first."""
    files = {
        "lib/fileutils.py": (
            "def atomic_save(path, data):\n    return rename_temp(path, data)\n\n\n"
            "def rename_temp(path, data):\n    return path\n\n\n"
            "class AtomicSaver:\n    def write_temp_file(self):\n        return None\n"
        ),
        "lib/ioutils.py": "class SpooledIO:\n    def write(self, data):\n        return data\n",
        "lib/other.py": "".join(f"def helper_{i}(x):\n    return x\n\n\n" for i in range(10)),
    }
    g = open_graph(write_tree(tmp_path / "proj", files), jobs=1)
    found = g.place("write a file atomically by renaming a temp file").files
    assert [f.path for f in found] == ["lib/fileutils.py"]


def test_signature_mode_lists_one_override_of_a_hook(tmp_path: Path) -> None:
    """marshmallow (seed 5023): `similar Field.get_value --mode signature` gave five of ten
    places to `_serialize(value, attr, obj)` overridden in five field classes; arrow's
    `isoformat` four to `_format_relative`. One answer per name; a stub beside its module is
    none (more-itertools' `gray_product` answered through `more.pyi`)."""
    hooks = "".join(
        f"class {kind}(Field):\n    def _serialize(self, value, attr, obj):\n"
        "        return str(value)\n\n\n"
        for kind in ("Tuple", "Enum", "Function", "Url")
    )
    files = {
        "lib/fields.py": (
            "class Field:\n    def get_value(self, obj, attr, accessor=None):\n"
            "        return accessor(obj, attr)\n\n"
            "    def serialize(self, attr, obj, accessor=None):\n"
            "        return self.get_value(obj, attr, accessor)\n\n\n" + hooks
        ),
        "lib/schema.py": (
            "class Schema:\n    def get_attribute(self, obj, attr, default):\n"
            "        return getattr(obj, attr, default)\n"
        ),
        "lib/schema.pyi": "class Schema:\n    def get_attribute(self, obj, attr, default): ...\n",
    }
    g = open_graph(write_tree(tmp_path / "proj", files), jobs=1)
    rows = g.similar("Field.get_value", mode="signature")
    names = [r.name for r in rows]
    assert names.count("_serialize") == 1
    assert names.count("get_attribute") == 1
    assert all(r.path != "lib/schema.pyi" for r in rows)


STRUCTLOG = {
    "log/typing.py": (
        "from typing import Protocol\n\n\n"
        "class FilteringBoundLogger(Protocol):\n"
        "    def get_effective_level(self) -> int:\n"
        '        """The level; a stub."""\n\n'
        "    def bind(self, **new_values) -> FilteringBoundLogger:\n"
        '        """Bind values; a stub."""\n'
    ),
    "log/stdlib.py": (
        "class BoundLogger:\n"
        "    def getEffectiveLevel(self) -> int:\n        return self._logger.level\n\n"
        "    def get_effective_level(self) -> int:\n        return self.getEffectiveLevel()\n\n"
        "    def fileno(self) -> int:\n        return 2\n\n"
        "    def close(self) -> None:\n        self._logger = None\n"
    ),
    "log/tz.py": (
        "class tzutc:\n    def utcoffset(self, dt):\n        return ZERO\n\n\n"
        "class tzfile:\n    def utcoffset(self, dt):\n        return self._find(dt)\n"
    ),
}


def test_a_method_asked_by_its_class_is_no_answer_to_itself(tmp_path: Path) -> None:
    """python-dateutil (seed 7207): `similar tzfile.utcoffset` listed `tzfile.utcoffset`
    itself among "the same name"."""
    g = open_graph(write_tree(tmp_path / "proj", STRUCTLOG), jobs=1)
    rows = [(r.path, r.line) for r in g.similar("tzfile.utcoffset")]
    assert ("log/tz.py", 7) not in rows
    assert ("log/tz.py", 2) in rows


def test_signature_mode_finds_a_namesake_of_no_parameter_with_the_same_return(
    tmp_path: Path,
) -> None:
    """structlog (seed 7207): `similar BoundLogger.get_effective_level --mode signature`
    found nothing, though `typing.py` declares the same `get_effective_level(self) -> int`
    and `getEffectiveLevel(self) -> int` is what it wraps: two empty parameter lists share
    nothing, unless the same words name them and their annotated returns agree (`fileno`,
    another `-> int` of no parameter, stays out)."""
    g = open_graph(write_tree(tmp_path / "proj", STRUCTLOG), jobs=1)
    names = [r.name for r in g.similar("BoundLogger.get_effective_level", mode="signature")]
    assert sorted(names) == ["getEffectiveLevel", "get_effective_level"]


def test_a_stub_body_is_like_other_stubs_not_like_a_procedure() -> None:
    """structlog (seed 7207): a Protocol method whose body is its docstring was said to
    return `none` (it falls off the end), and matched every procedure by that; it is a
    `stub`, as the parent Protocol's methods it is compared with are."""
    from ore.graph.judgment.returns import return_shapes

    lines = STRUCTLOG["log/typing.py"].splitlines()
    assert return_shapes(lines, 8, 9).shapes == {"stub"}
    lines = STRUCTLOG["log/stdlib.py"].splitlines()
    assert return_shapes(lines, 11, 12).shapes == {"none"}


def test_a_long_signature_keeps_its_return_annotation(tmp_path: Path) -> None:
    """humanize (seed 8311): `naturaltime(value, future=False, months=True,
    minimum_unit=..., when=...) -> str` was kept cut at 160 characters, its `-> str` lost,
    and `similar naturaltime --mode signature` found nothing."""
    head = (
        "def naturaltime(value: dt.datetime | dt.timedelta | float, future: bool = False, "
        "months: bool = True, minimum_unit: str = 'seconds', "
        "when: dt.datetime | None = None) -> str:\n"
    )
    files = {
        "hz/time.py": head
        + "    return naturaldelta(value, months, minimum_unit)\n\n\n"
        + "def naturaldelta(value: dt.timedelta | float, months: bool = True, "
        "minimum_unit: str = 'seconds') -> str:\n    return str(value)\n",
    }
    g = open_graph(write_tree(tmp_path / "proj", files), jobs=1)
    (anchor,) = [s for s in g.symbol("naturaltime")]
    assert anchor.signature.endswith("-> str")
    assert [r.name for r in g.similar("naturaltime", mode="signature")] == ["naturaldelta"]


def test_a_common_word_may_complete_a_compound_file_name(tmp_path: Path) -> None:
    """humanize (seed 8311): "... a human-readable file size" did not list `filesize.py`,
    the owner: `file` is too common in a description to be a term ("which file should hold
    ..."), so `size` alone spelled half its name. Such a word may complete a name beside a
    term, never cover one alone (`file.py` stays unnamed by it)."""
    files = {
        "hz/filesize.py": "def naturalsize(value, binary=False):\n    return str(value)\n",
        "hz/number.py": "def intcomma(value):\n    return str(value)\n\n\n"
        "def ordinal(value):\n    return str(value)\n",
        "hz/time.py": "def naturaltime(value):\n    return str(value)\n",
        "hz/file.py": "def open_file(path):\n    return path\n",
    }
    g = open_graph(write_tree(tmp_path / "proj", files), jobs=1)
    found = [
        f.path for f in g.place("format a number of bytes as a human-readable file size").files
    ]
    assert found[0] == "hz/filesize.py"
    assert "hz/file.py" not in found


def test_signature_mode_reads_the_annotated_return_and_names_of_no_parameter(
    tmp_path: Path,
) -> None:
    """tomlkit and humanize (seed 8311): `load(fp) -> TOMLDocument` found nothing, though
    `loads(string) -> TOMLDocument` is its twin (the project's own type returned by both
    says what a call hands back); `thousands_separator() -> str` found nothing beside
    `decimal_separator() -> str` (of no parameter, a name word shared with the same return
    is a likeness; `version() -> str` shares none and stays out)."""
    files = {
        "tk/api.py": (
            "def load(fp: IO[str]) -> TOMLDocument:\n    return parse(fp.read())\n\n\n"
            "def loads(string: str | bytes) -> TOMLDocument:\n    return parse(string)\n\n\n"
            "def dumps(data: Mapping) -> str:\n    return data.as_string()\n"
        ),
        "hz/i18n.py": (
            "def thousands_separator() -> str:\n    return _THOUSANDS.get(_locale())\n\n\n"
            "def decimal_separator() -> str:\n    return _DECIMAL.get(_locale())\n\n\n"
            "def version() -> str:\n    return _VERSION.strip()\n"
        ),
    }
    g = open_graph(write_tree(tmp_path / "proj", files), jobs=1)
    assert [r.name for r in g.similar("load", mode="signature")] == ["loads"]
    names = [r.name for r in g.similar("thousands_separator", mode="signature")]
    assert names == ["decimal_separator"]


def test_a_clone_family_is_listed_once_before_other_findings(tmp_path: Path) -> None:
    """tomlkit (seed 8311): seven of `duplicates`' first ten were slices of one pattern, the
    operator wrappers `Integer` and `Float` share. A group whose places lie in the
    definitions that hold an earlier group's places comes after the other groups (none is
    dropped); a copy between two methods of one large class stays a finding of its own."""

    def wrappers(cls: str) -> str:
        ops = ("add", "sub", "mul", "truediv", "floordiv", "mod", "pow", "lshift")
        body = "".join(
            f"    def __{op}__(self, other):\n"
            f"        result = super().__{op}__(other)\n"
            "        if result is NotImplemented:\n            return result\n"
            "        return self._new(result)\n\n"
            for op in ops
        )
        return f"class {cls}(Item):\n{body}\n"

    copied = (
        "    def {name}(self, items):\n        seen = set()\n        out = []\n"
        "        for item in items:\n            if item.key in seen:\n                continue\n"
        "            seen.add(item.key)\n            out.append(item.render(self.indent))\n"
        "        return '\\n'.join(out)\n\n"
    )
    big = (
        "class Container:\n" + copied.format(name="render_table") + copied.format(name="render_aot")
    )
    files = {"tk/items.py": wrappers("Integer") + "\n" + wrappers("Float"), "tk/container.py": big}
    g = open_graph(write_tree(tmp_path / "proj", files), jobs=1)
    groups = g.duplicates()
    places = [{o.path for o in c.occurrences} for c in groups]
    first_container = places.index({"tk/container.py"})
    assert first_container == 1, [[(o.path, o.start) for o in c.occurrences] for c in groups]
    assert len(groups) > 2  # the wrappers' other slices are still listed, after it


def test_place_reads_names_from_their_start_and_knows_underscored_test_folders(
    tmp_path: Path,
) -> None:
    """An outside tester on trio: "a lock that many tasks wait on" put `_mock_clock.py`
    first (`lock` spells four fifths of `clock`), and a file under `_tests/` above the
    library (trio's test folders are `_tests`)."""
    files = {
        "trio/_core/_mock_clock.py": "class MockClock:\n    def jump(self, seconds):\n        return seconds\n",
        "trio/_sync.py": (
            "class Lock:\n    def acquire(self):\n        return True\n\n"
            "    def wait_for_release(self):\n        return None\n"
        ),
        "trio/_tests/type_tests/task_status.py": (
            "def check_task_status_wait(task):\n    return task.wait()\n"
        ),
        "trio/_other.py": "".join(f"def helper_{i}(x):\n    return x\n\n\n" for i in range(10)),
    }
    g = open_graph(write_tree(tmp_path / "proj", files), jobs=1)
    found = [f.path for f in g.place("a lock that many tasks wait on").files]
    assert found[0] == "trio/_sync.py"
    assert "trio/_core/_mock_clock.py" not in found
    assert "trio/_tests/type_tests/task_status.py" not in found


def test_a_typescript_declaration_beside_its_module_is_no_answer(tmp_path: Path) -> None:
    """An outside tester on @jupyter-widgets/controls: `place "a color picker widget"` put
    `lib/widget_color.d.ts` first, before the code it declares."""
    from ore.graph.index.kinds import stub_beside_module

    files = {
        "lib/widget_color.js": "export class ColorPickerModel {\n  pick() { return 1; }\n}\n",
        "lib/widget_color.d.ts": "export declare class ColorPickerModel {\n  pick(): number;\n}\n",
        "types/only.d.ts": "export declare function helper(): void;\n",
    }
    g = open_graph(write_tree(tmp_path / "proj", files), jobs=1)
    found = [f.path for f in g.place("a color picker widget").files]
    assert found[0] == "lib/widget_color.js"
    assert "lib/widget_color.d.ts" not in found
    assert not stub_beside_module("types/only.d.ts", g.index.files)


def test_a_verbatim_copy_of_a_table_module_is_found(tmp_path: Path) -> None:
    """An outside tester on pygments: a copy of `_lasso_builtins.py`, a table of short
    strings none of which seeds a match, was "no code like the snippet"."""
    table = "BUILTINS = (\n" + "".join(f"    'name_{i}',\n" for i in range(300)) + ")\n"
    files = {"lex/_builtins.py": table, "lex/python.py": "def lex(text):\n    return text\n"}
    g = open_graph(write_tree(tmp_path / "proj", files), jobs=1)
    (first, *_rest) = g.duplicates_of(table)
    assert (first.path, first.start, first.kind, first.score) == (
        "lex/_builtins.py",
        1,
        "exact",
        1.0,
    )


def test_signature_mode_reads_returns_at_the_lines_the_index_numbers(tmp_path: Path) -> None:
    """A form feed before a function (a page break, as the standard library's `email` has)
    shifted every line after it when judgment read a file with `str.splitlines`: signature
    mode read `load_item`'s return one line off and said it "returns none"."""
    files = {
        "lib/store.py": (
            "def load_user(key, db):\n    a, b = db.get(key)\n    return b\n\x0c\n"
            "def load_item(key, db):\n    a, b = db.get(key)\n    return b\n"
        ),
    }
    g = open_graph(write_tree(tmp_path / "proj", files), jobs=1)
    (row,) = g.similar("load_user", mode="signature")
    assert row.name == "load_item"
    assert "returns name" in row.reason, row.reason


def test_signature_lists_what_a_typescript_module_exports(tmp_path: Path) -> None:
    """An outside tester: `signature` listed a TypeScript module's unexported `notExported`
    and a namespace's member `nsFn` as public top-level names."""
    files = {
        "web.ts": (
            "export function outer(): number {\n  return 1;\n}\n"
            "function notExported(): void {}\n"
            "export default class Widget {\n  render(): void {}\n}\n"
            "namespace NS { export function nsFn() {} }\n"
            "const LOCAL_LIMIT = 3;\nexport const MAX_ITEMS = 10;\n"
        ),
        "use.ts": "import { outer } from './web';\nexport const x = outer();\n",
    }
    g = open_graph(write_tree(tmp_path / "proj", files), jobs=1)
    line = next(
        row for row in g.signature("standard").text.splitlines() if row.startswith("  web.ts")
    )
    assert "outer" in line and "Widget" in line and "MAX_ITEMS" in line, line
    assert "notExported" not in line and "nsFn" not in line and "LOCAL_LIMIT" not in line, line


def test_a_sibling_in_the_module_defining_the_name_weighs_more(tmp_path: Path) -> None:
    """An outside tester: docutils' `similar publish_string` ranked `publish_parts` twelfth,
    below every `...String` class elsewhere; aiohttp's `similar TCPConnector` did not list
    `UnixConnector` at all. A name sharing a word with the one asked for, in the module that
    defines it, is its family."""
    files = {
        "net/connector.py": (
            "class BaseConnector:\n    pass\n\n\nclass TCPConnector(BaseConnector):\n    pass\n\n\n"
            "class UnixConnector(BaseConnector):\n    pass\n"
        ),
        "net/client.py": "class ClientSession:\n    def connector(self):\n        return None\n",
        "net/sites.py": "class TCPSite:\n    pass\n",
        "net/helpers.py": "".join(f"def helper_{i}(x):\n    return x\n\n\n" for i in range(40)),
    }
    g = open_graph(write_tree(tmp_path / "proj", files), jobs=1)
    rows = g.similar("TCPConnector")
    names = [r.name for r in rows]
    assert "UnixConnector" in names and "BaseConnector" in names, names
    assert all("same module" in r.reason for r in rows if r.path == "net/connector.py")


def test_a_name_defined_in_several_modules_stands_for_the_public_one(tmp_path: Path) -> None:
    """packaging (seed 9413): `similar platform_tags --mode signature` compared with
    `_manylinux.platform_tags`, silently; the public `tags.platform_tags` came back as an
    answer. A public module comes before a private one (`_manylinux.py`)."""
    body = "def platform_tags(arch):\n    yield from _tags(arch)\n"
    files = {
        "pkg/_manylinux.py": body,
        "pkg/_musllinux.py": body,
        "pkg/tags.py": "def platform_tags(arch):\n    yield from _tags(arch)\n",
    }
    g = open_graph(write_tree(tmp_path / "proj", files), jobs=1)
    paths = {r.path for r in g.similar("platform_tags", mode="signature")}
    assert paths == {"pkg/_manylinux.py", "pkg/_musllinux.py"}, paths


def test_a_dunder_name_answers_only_a_dunder_name(tmp_path: Path) -> None:
    """sortedcontainers (seed 9413): `similar SortedList.copy` answered `__copyright__`
    (`copy` is a piece of it), a module's metadata, not a feature."""
    files = {
        "sc/__init__.py": "__copyright__ = '2014 Grant Jenks'\n__version__ = '2.4.0'\n",
        "sc/sortedlist.py": (
            "class SortedList:\n    def copy(self):\n        return SortedList(self)\n\n"
            "    def __copy__(self):\n        return self.copy()\n"
        ),
        "sc/sorteddict.py": "class SortedDict:\n    def copy(self):\n        return dict(self)\n",
    }
    g = open_graph(write_tree(tmp_path / "proj", files), jobs=1)
    names = [r.name for r in g.similar("SortedList.copy")]
    assert "__copyright__" not in names and "__copy__" not in names, names
    assert "copy" in names  # SortedDict's


def test_procedures_of_no_parameter_are_not_siblings_by_a_shared_word(tmp_path: Path) -> None:
    """packaging (seed 9413): `similar DirectUrl.validate --mode signature` gave seven of ten
    places to tests named `test_..._validate_...(self) -> None`: a shared word and a `None`
    return are nothing two procedures of no parameter would not share."""
    files = {
        "pkg/direct_url.py": (
            "class DirectUrl:\n    def validate(self) -> None:\n        check(self)\n"
        ),
        "pkg/pylock.py": "class Package:\n    def validate(self) -> None:\n        check(self)\n",
        "tests/test_metadata.py": (
            "class TestMetadata:\n"
            "    def test_from_email_validate(self) -> None:\n        run_validate()\n\n"
            "    def test_raw_validate_unknown(self) -> None:\n        run_validate()\n"
        ),
    }
    g = open_graph(write_tree(tmp_path / "proj", files), jobs=1)
    rows = g.similar("DirectUrl.validate", mode="signature")
    assert [(r.path, r.name) for r in rows] == [("pkg/pylock.py", "validate")]


def test_similar_by_name_of_a_class_method_that_is_not_there_is_one_error(
    tmp_path: Path,
) -> None:
    """`similar Nope.x` by name said "nothing similar", exit 0, where signature mode says
    no such method: `Class.method` names one definition; a typo in it is an error."""
    from ore.errors import GraphError

    files = {"lib/result.py": "class Result:\n    def get_result(self):\n        return 1\n"}
    g = open_graph(write_tree(tmp_path / "proj", files), jobs=1)
    with pytest.raises(GraphError, match="in a class 'Nope'"):
        g.similar("Nope.get_result")
    assert g.similar("any_identifier") == []
