"""[tool.oracle-guard]: defaults, overrides, and clear errors for bad settings."""
from __future__ import annotations

import argparse

import pytest

from oracle_guard.config import add_config_arguments
from oracle_guard.config import apply_arguments
from oracle_guard.config import Config
from oracle_guard.config import load_config
from oracle_guard.findings import ConfigError


def test_missing_pyproject_gives_the_spec_defaults(tmp_path):
    cfg = load_config(str(tmp_path))
    assert cfg == Config(root=str(tmp_path))
    assert cfg.src == ('src/',)
    assert cfg.tests == ('tests/',)
    assert cfg.properties == ('tests/properties/',)
    assert cfg.manifest == 'tests/fixtures/manifest.json'
    assert cfg.ledger == 'tests/freeze_ledger.yaml'
    assert cfg.domain_lock == 'tests/domain_lock.json'
    assert cfg.base_ref is None
    assert not cfg.has_table


def test_pyproject_without_our_table_gives_defaults(tmp_path):
    (tmp_path / 'pyproject.toml').write_text('[project]\nname = "x"\n')
    assert load_config(str(tmp_path)).src == ('src/',)


def test_table_values_are_normalized(tmp_path):
    (tmp_path / 'pyproject.toml').write_text(
        '[tool.oracle-guard]\nsrc = ["lib", "./pkg/"]\nproperties = "qa/props"\n'
        'ledger = "./qa/ledger.yaml"\nbase-ref = "origin/main"\nmax-freeze-days = 30\n',
    )
    cfg = load_config(str(tmp_path))
    assert cfg.src == ('lib/', 'pkg/')
    assert cfg.properties == ('qa/props/',)
    assert cfg.ledger == 'qa/ledger.yaml'
    assert cfg.base_ref == 'origin/main'
    assert cfg.max_freeze_days == 30
    assert cfg.has_table


@pytest.mark.parametrize('line, message', [
    ('srcs = ["x/"]', "unknown key 'srcs'"),
    ('src = 3', "'src' must be a list of folders, files or globs"),
    ('src = []', "'src' must be a list of folders, files or globs"),
    ('ledger = ["a"]', "'ledger' must be a string path"),
    ('ledger = "/etc/ledger.yaml"', 'leaves the repository'),
    ('ledger = "../ledger.yaml"', 'leaves the repository'),
    ('ledger = "a\\\\b.yaml"', 'leaves the repository'),
    ('max-freeze-days = -1', 'whole number'),
    ('max-freeze-days = true', 'whole number'),
    ('max-freeze-days = 3000000', 'a freeze is temporary'),
    ('allow-silences = ["everything"]', "unknown kind 'everything'"),
    ('flaky-reruns = 1', 'a flip needs at least two runs'),
    ('flaky-reruns = 500', 'between 2 and 50'),
    ('flaky-reruns = "5"', 'whole number'),
    ('require-fail-to-pass = "yes"', 'must be true or false'),
    ('require-fail-to-pass = 1', 'must be true or false'),
    ('fixtures = []', "'fixtures' must be a folder or a list of folders"),
    ('fixtures = [3]', "'fixtures' must be a folder or a list of folders"),
    ('fixtures = ["tests/**/data/"]', 'not its root or a glob'),
    ('fixtures = ["."]', 'not its root or a glob'),
    ('fixtures = ["../data/"]', 'leaves the repository'),
    ('require-oracle-reach = 101', 'is a percent: 0 to 100'),
    ('require-mutants-killed = -5', 'whole number'),
    ('mutant-budget = 1.5', 'whole number'),
])
def test_bad_settings_name_file_and_line(tmp_path, line, message):
    (tmp_path / 'pyproject.toml').write_text(f'[project]\nname = "x"\n\n[tool.oracle-guard]\n{line}\n')
    with pytest.raises(ConfigError) as info:
        load_config(str(tmp_path))
    assert info.value.path == 'pyproject.toml'
    assert info.value.line == 5
    assert message in info.value.message


def test_invalid_toml_names_the_line(tmp_path):
    (tmp_path / 'pyproject.toml').write_text('[project]\nname = "x"\n[tool.oracle-guard]\nsrc = [\n')
    with pytest.raises(ConfigError) as info:
        load_config(str(tmp_path))
    assert info.value.line >= 4
    assert 'invalid TOML' in info.value.message


def test_non_utf8_pyproject_is_a_clear_error(tmp_path):
    (tmp_path / 'pyproject.toml').write_bytes(b'[tool.oracle-guard]\n# \xff\n')
    with pytest.raises(ConfigError, match='not valid UTF-8'):
        load_config(str(tmp_path))


def test_hook_args_override_the_table(tmp_path):
    (tmp_path / 'pyproject.toml').write_text('[tool.oracle-guard]\nsrc = ["src/"]\n')
    parser = argparse.ArgumentParser()
    add_config_arguments(parser)
    args = parser.parse_args(['--src', 'lib', '--src', 'app/', '--ledger', 'qa/l.yaml',
                              '--max-freeze-days', '7'])
    cfg = apply_arguments(load_config(str(tmp_path)), args)
    assert cfg.src == ('lib/', 'app/')
    assert cfg.ledger == 'qa/l.yaml'
    assert cfg.max_freeze_days == 7


def test_hook_args_are_validated_too(tmp_path):
    parser = argparse.ArgumentParser()
    add_config_arguments(parser)
    with pytest.raises(ConfigError, match='leaves the repository'):
        apply_arguments(load_config(str(tmp_path)), parser.parse_args(['--manifest', '../m.json']))


def test_evidence_keys_default_to_five_reruns_and_listing_only(tmp_path):
    cfg = load_config(str(tmp_path))
    assert (cfg.flaky_reruns, cfg.require_fail_to_pass) == (5, False)
    (tmp_path / 'pyproject.toml').write_text(
        '[tool.oracle-guard]\nflaky-reruns = 8\nrequire-fail-to-pass = true\n')
    cfg = load_config(str(tmp_path))
    assert (cfg.flaky_reruns, cfg.require_fail_to_pass) == (8, True)


def test_reach_keys_are_report_only_and_the_budget_the_reference_runs_by_default(tmp_path):
    cfg = load_config(str(tmp_path))
    assert (cfg.require_oracle_reach, cfg.require_mutants_killed, cfg.mutant_budget) == \
        (None, None, None)
    (tmp_path / 'pyproject.toml').write_text(
        '[tool.oracle-guard]\nrequire-oracle-reach = 80\nrequire-mutants-killed = 0\n'
        'mutant-budget = 0\n')
    cfg = load_config(str(tmp_path))
    assert (cfg.require_oracle_reach, cfg.require_mutants_killed, cfg.mutant_budget) == \
        (80, 0, 0)


def test_evidence_keys_from_hook_args_are_validated(tmp_path):
    parser = argparse.ArgumentParser()
    add_config_arguments(parser)
    cfg = apply_arguments(load_config(str(tmp_path)),
                          parser.parse_args(['--require-fail-to-pass', 'true']))
    assert cfg.require_fail_to_pass is True
    with pytest.raises(ConfigError, match='must be true or false'):
        apply_arguments(cfg, parser.parse_args(['--require-fail-to-pass', 'maybe']))


# -- membership: folders, files and globs (section 8 of docs/adoption.md) ------------------

def test_a_file_under_both_src_and_a_tests_glob_is_a_test_not_production_code(tmp_path):
    (tmp_path / 'pyproject.toml').write_text(
        '[tool.oracle-guard]\nsrc = ["pkg/"]\ntests = ["pkg/**/tests/"]\n')
    cfg = load_config(str(tmp_path))
    assert cfg.tests == ('pkg/**/tests/',)
    for path in ('pkg/tests/test_a.py', 'pkg/sub/tests/test_b.py', 'pkg/a/b/tests/conftest.py'):
        assert cfg.is_test_code(path) and not cfg.is_src(path), path
    assert cfg.is_test('pkg/tests/data/case.json') and not cfg.is_src('pkg/tests/data/case.json')
    for path in ('pkg/core.py', 'pkg/sub/testsuite.py', 'pkg/sub/tests.py'):
        assert cfg.is_src(path) and not cfg.is_test_code(path), path
    assert cfg.test_roots() == ('pkg/', 'tests/properties/')  # properties are test code


def test_properties_name_files_in_place_and_globs(tmp_path):
    (tmp_path / 'pyproject.toml').write_text(
        '[tool.oracle-guard]\nproperties = ["tests/test_hypothesis.py", "tests/**/test_*_props.py"]\n')
    cfg = load_config(str(tmp_path))
    assert cfg.properties == ('tests/test_hypothesis.py', 'tests/**/test_*_props.py')
    assert cfg.is_property('tests/test_hypothesis.py')
    assert not cfg.is_property('tests/test_hypothesis.py.orig')
    assert not cfg.is_property('tests/test_hypothesis_extra.py')
    assert cfg.is_property('tests/test_io_props.py') and cfg.is_property('tests/a/test_x_props.py')
    assert not cfg.is_property('tests/test_core.py')
    # A property file is test code even when src covers it.
    assert cfg.replace(src=('tests/',)).is_src('tests/test_hypothesis.py') is False
    assert cfg.property_roots() == ('tests/',)


def test_empty_properties_is_a_choice_not_made_yet_but_empty_tests_is_an_error(tmp_path):
    (tmp_path / 'pyproject.toml').write_text('[tool.oracle-guard]\nproperties = []\n')
    assert load_config(str(tmp_path)).properties == ()
    (tmp_path / 'pyproject.toml').write_text('[tool.oracle-guard]\ntests = []\n')
    with pytest.raises(ConfigError, match="'tests' must be a list of folders, files or globs"):
        load_config(str(tmp_path))


def test_a_glob_at_the_top_scans_the_whole_repository(tmp_path):
    (tmp_path / 'pyproject.toml').write_text('[tool.oracle-guard]\ntests = ["**/tests/"]\n')
    cfg = load_config(str(tmp_path))
    assert cfg.test_roots() == ('',)
    assert cfg.is_test_code('tests/test_a.py') and cfg.is_test_code('a/b/tests/test_c.py')
    assert not cfg.is_test_code('a/testsx/test_c.py')


def test_a_glob_entry_matches_as_its_regular_expression_does():
    """Globs without a [...] class are matched without the re module (sympy's tests root
    made every hook import it); the regular expression the class-bearing ones still use
    is the reference: seeded patterns of **/, **, *, ? and literals (a newline among
    them, which `.` does not match), as file and folder entries, on seeded paths."""
    import random
    import re

    from oracle_guard.config import _glob_regex
    from oracle_guard.config import GlobMatcher

    rng = random.Random(1)
    pattern_parts = ['a', 'b', 'tests', 'x.py', '*', '?', '**', '**/', '/', '.', '\n', 'ab*']
    path_parts = ['a', 'b', 'tests', 'x.py', '/', '.', '\n', 'ab', 'test', '', '//']
    matched = 0
    for _ in range(3000):
        pattern = ''.join(rng.choice(pattern_parts) for _ in range(rng.randrange(1, 6)))
        full = rng.random() < 0.5
        reference = re.compile(_glob_regex(pattern) + (r'\Z' if full else ''))
        matcher = GlobMatcher(pattern, full)
        for _ in range(8):
            path = ''.join(rng.choice(path_parts) for _ in range(rng.randrange(7)))
            expected = reference.match(path) is not None
            assert matcher.match(path) == expected, (pattern, full, path)
            matched += expected
    assert matched > 2000


@pytest.mark.parametrize('raw', [b'a = 1\n', b'\xef\xbb\xbfa = 1\n', b'\xef\xbb\xbf\xef\xbb\xbfx',
                                 b'\xef\xbb', b'\xef\xbb\xbfab\n\xff', b'ab\n\xc3', b''])
def test_decode_utf8_sig_is_the_codec(raw):
    from oracle_guard.config import decode_utf8_sig

    def outcome(decode):  # type: ignore[no-untyped-def]
        try:
            return decode(raw)
        except UnicodeDecodeError as exc:
            return (exc.start, exc.end, exc.reason)

    assert outcome(decode_utf8_sig) == outcome(lambda r: r.decode('utf-8-sig'))


def test_fixtures_take_one_folder_or_a_list_and_key_the_manifest_accordingly(tmp_path):
    (tmp_path / 'pyproject.toml').write_text('[tool.oracle-guard]\nfixtures = "tests/fx"\n')
    cfg = load_config(str(tmp_path))
    assert cfg.fixtures == ('tests/fx/',)
    assert cfg.manifest_folder() == 'tests/fixtures/'  # the manifest's own folder
    (tmp_path / 'pyproject.toml').write_text(
        '[tool.oracle-guard]\nfixtures = ["tests/fixtures/", "tests/data", "pkg/tests/fixtures/"]\n')
    cfg = load_config(str(tmp_path))
    assert cfg.fixtures == ('tests/fixtures/', 'tests/data/', 'pkg/tests/fixtures/')
    assert cfg.manifest_folder() == ''  # several folders: keys are repository paths
    assert cfg.is_fixture('tests/data/cases.json') and cfg.is_fixture('pkg/tests/fixtures/a.bin')
    assert not cfg.is_fixture('tests/fixtures/manifest.json')
    assert not cfg.is_fixture('tests/database.json')
