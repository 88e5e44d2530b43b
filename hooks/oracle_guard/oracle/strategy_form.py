"""The canonical form of a Hypothesis strategy (domain lock version 2) and how to compare two.

A form is plain JSON, so the lock diff reads like the strategy:

```json
{"strategy": "lists",
 "elements": {"strategy": "text", "alphabet": "ab", "min_size": 0, "max_size": 20},
 "min_size": 0, "max_size": null, "unique": false, "unique_by": null}
```

* a strategy is an object with ``"strategy"`` (its public name) and every parameter this
  module knows for it, defaults written out (``PARAMETERS``: a fixed table, so the form is
  the same whichever Hypothesis release or Python version reads it); ``.filter``,
  ``.map`` and ``.flatmap`` are listed in order under ``"transforms"``;
* code (a lambda, a filter function, a ``@composite`` body) is ``{"code": text,
  "digest": …}``; the digest is of the syntax tree without positions, so reformatting
  does not change it and any edit does;
* a value that is not JSON (an enum, a class) is ``{"expr": source text}``;
* what could not be read is ``{"unresolved": source text, "why": …}``: never trusted,
  reported as checked at run time.

``compare`` says whether a live form tests at least what a locked form does; the static
hook, the pytest plugin and the ``lock`` command all use it, so they agree.
``live_strategy_form.live_form`` builds the same form from the strategy objects Hypothesis
built.
"""
from __future__ import annotations

import ast
import hashlib
import json
import unicodedata

TYPE_CHECKING = False
if TYPE_CHECKING:  # annotations only: typing costs import time on the hooks' hot path
    from typing import Any
    from typing import Callable

REQUIRED = object()  # a parameter without a default

# How a parameter widens: "min"/"max" bounds (None = unbounded), "size_min" (None = 0),
# "flag" (True is wider), "narrowing_flag" (True is narrower), "strategy", "strategies"
# (pairwise), "branches" (one_of), "elements" (a superset is wider), "alphabet", "mapping",
# "code", "superset"/"subset" (collections, None = everything / nothing), "codec"
# (None is widest), "exact".
_SIZE = (('min_size', 0, 'size_min'), ('max_size', None, 'max'))
_VALUE = (('min_value', None, 'min'), ('max_value', None, 'max'))
_NAN = (('allow_nan', None, 'flag'), ('allow_infinity', None, 'flag'))
PARAMETERS: dict[str, tuple[tuple[str, Any, str], ...]] = {
    'integers': _VALUE,
    'floats': (*_VALUE, *_NAN, ('allow_subnormal', None, 'flag'), ('width', 64, 'exact'),
               ('exclude_min', False, 'narrowing_flag'),
               ('exclude_max', False, 'narrowing_flag')),
    'decimals': (*_VALUE, *_NAN, ('places', None, 'exact')),
    'fractions': (*_VALUE, ('max_denominator', None, 'max')),
    'complex_numbers': (('min_magnitude', 0, 'size_min'), ('max_magnitude', None, 'max'),
                        *_NAN, ('allow_subnormal', True, 'flag'), ('width', 128, 'exact')),
    'characters': (('codec', None, 'codec'), ('min_codepoint', None, 'min'),
                   ('max_codepoint', None, 'max'), ('categories', None, 'superset'),
                   ('exclude_categories', None, 'subset'),
                   ('include_characters', None, 'superset_or_none'),
                   ('exclude_characters', None, 'subset')),
    'text': (('alphabet', REQUIRED, 'alphabet'), *_SIZE),  # default: TEXT_ALPHABET
    'binary': _SIZE,
    'lists': (('elements', REQUIRED, 'strategy'), *_SIZE, ('unique_by', None, 'exact'),
              ('unique', False, 'narrowing_flag')),
    'iterables': (('elements', REQUIRED, 'strategy'), *_SIZE, ('unique_by', None, 'exact'),
                  ('unique', False, 'narrowing_flag')),
    'sets': (('elements', REQUIRED, 'strategy'), *_SIZE),
    'frozensets': (('elements', REQUIRED, 'strategy'), *_SIZE),
    'dictionaries': (('keys', REQUIRED, 'strategy'), ('values', REQUIRED, 'strategy'),
                     ('dict_class', {'expr': 'dict'}, 'exact'), *_SIZE),
    'fixed_dictionaries': (('mapping', REQUIRED, 'mapping'), ('optional', None, 'mapping')),
    'tuples': (('args', (), 'strategies'),),
    'one_of': (('branches', (), 'branches'),),
    'sampled_from': (('elements', REQUIRED, 'elements'),),
    'permutations': (('values', REQUIRED, 'exact'),),
    'just': (('value', REQUIRED, 'exact'),),
    'none': (), 'booleans': (), 'nothing': (), 'randoms': (), 'random_module': (),
    'emails': (), 'data': (('draws', (), 'strategies'),),
    'uuids': (('version', None, 'exact'), ('allow_nil', False, 'flag')),
    'ip_addresses': (('v', None, 'exact'), ('network', None, 'exact')),
    'from_regex': (('regex', REQUIRED, 'exact'), ('fullmatch', False, 'narrowing_flag'),
                   ('alphabet', None, 'alphabet')),
    'from_type': (('thing', REQUIRED, 'exact'),),
    'builds': (('target', REQUIRED, 'exact'), ('args', (), 'strategies'),
               ('kwargs', {}, 'mapping')),
    'recursive': (('base', REQUIRED, 'strategy'), ('extend', REQUIRED, 'code'),
                  ('min_leaves', None, 'size_min'), ('max_leaves', 100, 'max')),
    'composite': (('function', REQUIRED, 'exact'), ('code', REQUIRED, 'code'),
                  ('draws', (), 'strategies'), ('arguments', {}, 'exact')),
    'shared': (('base', REQUIRED, 'strategy'), ('key', None, 'exact')),
    'deferred': (('definition', REQUIRED, 'code'),),
    'dates': (*_VALUE,), 'datetimes': (*_VALUE, ('timezones', None, 'exact')),
    'times': (*_VALUE, ('timezones', None, 'exact')), 'timedeltas': (*_VALUE,),
    'slices': (('size', REQUIRED, 'exact'),),
}
# Positional parameters of the public functions (after which come keyword-only ones).
POSITIONAL: dict[str, tuple[str, ...]] = {
    'integers': ('min_value', 'max_value'), 'floats': ('min_value', 'max_value'),
    'decimals': ('min_value', 'max_value'), 'fractions': ('min_value', 'max_value'),
    'text': ('alphabet',), 'characters': (), 'binary': (),
    'lists': ('elements',), 'iterables': ('elements',), 'sets': ('elements',),
    'frozensets': ('elements',), 'dictionaries': ('keys', 'values'),
    'fixed_dictionaries': ('mapping',), 'sampled_from': ('elements',),
    'permutations': ('values',), 'just': ('value',), 'uuids': (), 'ip_addresses': (),
    'from_regex': ('regex',), 'from_type': ('thing',),
    'recursive': ('base', 'extend'), 'shared': ('base',), 'deferred': ('definition',),
    'dates': ('min_value', 'max_value'), 'datetimes': ('min_value', 'max_value'),
    'times': ('min_value', 'max_value'), 'timedeltas': ('min_value', 'max_value'),
    'slices': ('size',), 'complex_numbers': (),
}
# Renamed parameters of older releases.
ALIASES = {'characters': {'whitelist_categories': 'categories',
                          'blacklist_categories': 'exclude_categories',
                          'whitelist_characters': 'include_characters',
                          'blacklist_characters': 'exclude_characters'}}
TRANSFORMS = ('filter', 'map', 'flatmap')


def node(name: str, **params: Any) -> dict[str, Any]:
    """A strategy form with every known parameter present (defaults filled in)."""
    node: dict[str, Any] = {'strategy': name}
    for param, default, _ in PARAMETERS.get(name, ()):
        if param in params:
            node[param] = params.pop(param)
        elif default is not REQUIRED:
            node[param] = list(default) if isinstance(default, tuple) else \
                (dict(default) if isinstance(default, dict) else default)
    node.update(params)  # parameters this table does not know: compared exactly
    return node


# text()'s default alphabet (Hypothesis 6.84+ spells it so; earlier releases excluded the
# surrogate category, which is the same set of characters).
TEXT_ALPHABET = node('characters', codec='utf-8')


def unresolved(text: str, why: str) -> dict[str, str]:
    return {'unresolved': text, 'why': why}


def expr(text: str) -> dict[str, str]:
    return {'expr': text}


def is_unresolved(form: Any) -> bool:
    return isinstance(form, dict) and 'unresolved' in form


def unresolved_parts(form: Any, where: str = '') -> list[tuple[str, dict[str, Any]]]:
    """(path inside the strategy, node) of every part the static reader could not read."""
    if is_unresolved(form):
        return [(where or 'strategy', form)]
    found: list[tuple[str, dict[str, Any]]] = []
    if isinstance(form, dict):
        name = form.get('strategy')
        for key, value in form.items():
            inner = _path(where, name, key) if name else f'{where}[{key!r}]'
            if isinstance(value, list):
                for i, item in enumerate(value):
                    found += unresolved_parts(item, f'{inner[:-1]}#{i + 1})')
            else:
                found += unresolved_parts(value, inner)
    return found


# -- code digests ------------------------------------------------------------------------

_SKIP_FIELDS = {'ctx', 'type_comment', 'kind', 'lineno', 'col_offset', 'end_lineno',
                'end_col_offset'}


def _dump(node: Any) -> str:
    """A syntax tree without positions and without empty fields: the same text for the
    same code on Python 3.9-3.13, whose ``ast.dump`` output differs."""
    if isinstance(node, ast.AST):
        parts = []
        for name, value in ast.iter_fields(node):
            if name in _SKIP_FIELDS or value is None or value == []:
                continue
            parts.append(f'{name}={_dump(value)}')
        return f'{type(node).__name__}({",".join(parts)})'
    if isinstance(node, list):
        return '[' + ','.join(_dump(v) for v in node) + ']'
    return repr(node)


def code_form(node: ast.AST, text: str | None = None) -> dict[str, str]:
    """``{"code": "lambda x: x > 0", "digest": "…"}`` for a lambda, a def or a name."""
    if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
        body = node.body
        if body and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant) \
                and isinstance(body[0].value.value, str):
            body = body[1:]  # a docstring is not behaviour
        digest_of: Any = [node.args, body]
        shown = text or f'def {node.name}(...)'
    else:
        digest_of = node
        shown = text or _unparse(node)
    digest = hashlib.sha256(_dump(digest_of).encode()).hexdigest()[:16]
    return {'code': shown if len(shown) <= 80 else shown[:77] + '...', 'digest': digest}


def code_form_of_source(source: str) -> dict[str, str] | None:
    """The code form of a lambda or def given as text (what Hypothesis prints at run time)."""
    try:
        tree = ast.parse(source.strip())
    except SyntaxError:
        return None
    if len(tree.body) != 1:
        return None
    stmt = tree.body[0]
    if isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef)):
        return code_form(stmt)
    if isinstance(stmt, ast.Expr):
        return code_form(stmt.value)
    return None


def _unparse(node: ast.AST) -> str:
    try:
        return ast.unparse(node)
    except Exception:  # noqa: BLE001 -- only used for display
        return '<code>'


# -- rendering ---------------------------------------------------------------------------

class Shown(str):
    """Text shown as it is in a message (not a value of the strategy)."""


def short(value: Any) -> str:
    """A value for a one-line message: long strings keep their ends (``"abc…z "``)."""
    if isinstance(value, Shown):
        return str(value)
    if isinstance(value, str):
        text = value if len(value) <= 12 else value[:3] + '\u2026' + value[-2:]
        return json.dumps(text, ensure_ascii=False)
    if isinstance(value, dict):
        if 'strategy' in value:
            return call_text(value)
        for key in ('code', 'expr', 'unresolved'):
            if key in value:
                return str(value[key])
        return '{' + ', '.join(f'{json.dumps(k)}: {short(v)}' for k, v in value.items()) + '}'
    text = json.dumps(value, ensure_ascii=False, sort_keys=True) \
        if _jsonable(value) else repr(value)
    return text if len(text) <= 60 else text[:57] + '...'


def _jsonable(value: Any) -> bool:
    try:
        json.dumps(value)
    except (TypeError, ValueError):
        return False
    return True


def call_text(form: Any, depth: int = 0) -> str:
    """A form as a call, non-default parameters only: ``lists(text(alphabet="ab"))``."""
    if not isinstance(form, dict) or 'strategy' not in form:
        return short(form)
    if depth > 3:
        return f'{form["strategy"]}(...)'
    name = form['strategy']
    defaults = {p: d for p, d, _ in PARAMETERS.get(name, ())}
    parts = []
    for key, value in form.items():
        if key in ('strategy', 'transforms'):
            continue
        default = defaults.get(key, REQUIRED)
        if default is not REQUIRED and _same(value, default) and not \
                (name == 'text' and key == 'alphabet'):
            continue
        if name == 'text' and key == 'alphabet' and value == TEXT_ALPHABET:
            continue
        if isinstance(value, list) and key in ('branches', 'args', 'draws'):
            parts.append(', '.join(call_text(v, depth + 1) for v in value))
        else:
            parts.append(f'{key}={call_text(value, depth + 1)}')
    text = f'{name}({", ".join(p for p in parts if p)})'
    for step in form.get('transforms', ()):
        method = next(iter(step))
        text += f'.{method}({short(step[method])})'
    return text


def _same(value: Any, default: Any) -> bool:
    if isinstance(default, tuple):
        default = list(default)
    return value == default


# -- comparison --------------------------------------------------------------------------

class Difference:
    """One place where a live form is not provably at least as wide as the locked one."""

    __slots__ = ('where', 'locked', 'live', 'runtime')

    def __init__(self, where: str, locked: Any, live: Any, runtime: bool = False) -> None:
        self.where = where  # 'lists(elements=text(alphabet))'
        self.locked = locked
        self.live = live
        self.runtime = runtime  # True: the static reader cannot tell; the plugin checks it

    def __repr__(self) -> str:
        return (f'Difference({self.where!r}, {self.locked!r}, {self.live!r}, '
                f'runtime={self.runtime})')

    def describe(self) -> str:
        if self.runtime:
            side = self.live if is_unresolved(self.live) else self.locked
            why = side.get('why', 'not readable') if isinstance(side, dict) else 'not readable'
            return (f'{self.where}: checked at run time ({short(side)}: {why})')
        return f'{self.where}: locked {short(self.locked)}, live {short(self.live)}'


def compare(locked: Any, live: Any, where: str = '') -> list[Difference]:
    """Every place ``live`` tests less than (or differently from) ``locked``; [] when it is
    equal or provably wider."""
    locked, live = _just_as_sampled(locked), _just_as_sampled(live)
    if is_unresolved(locked) or is_unresolved(live):
        if locked == live:
            return []
        return [Difference(where or 'strategy', locked, live, runtime=True)]
    if not (isinstance(locked, dict) and 'strategy' in locked):
        return [] if locked == live else [Difference(where or 'value', locked, live)]
    name = locked['strategy']
    if not (isinstance(live, dict) and 'strategy' in live):
        return [Difference(where or name, locked, live)]
    if live['strategy'] != name:
        if name == 'one_of':  # one branch left of a one_of: a narrowing, unless it covers
            return compare(locked, node('one_of', branches=[live]), where)
        if live['strategy'] == 'one_of' and any(
                not compare(locked, b) for b in live['branches']):
            return []  # one_of(locked, other): more branches, wider
        return [Difference(where or name, locked, live)]
    kinds = {p: k for p, _, k in PARAMETERS.get(name, ())}
    found: list[Difference] = []
    for key in sorted(set(locked) | set(live), key=_param_order(name)):
        if key in ('strategy', 'transforms'):
            continue
        inner = _path(where, name, key)
        if key == 'draws' and name in ('composite', 'data') and \
                (key not in live or key not in locked):
            continue  # what a body draws is read statically, not at run time
        if key == 'arguments' and name == 'composite' and 'draws' in live and \
                'draws' in locked:
            continue  # the draws show what the arguments do; a wider argument may pass
        if key not in live or key not in locked:
            found.append(Difference(inner, locked.get(key, Shown('<absent>')),
                                    live.get(key, Shown('<absent>'))))
            continue
        found.extend(_compare_param(kinds.get(key, 'exact'), locked[key], live[key], inner,
                                    where, name, key))
    found.extend(_compare_transforms(locked.get('transforms', []), live.get('transforms', []),
                                     _path(where, name, 'transforms')))
    return found


def _just_as_sampled(form: Any) -> Any:
    """just(v) draws what sampled_from([v]) draws (Hypothesis builds one from the other)."""
    if isinstance(form, dict) and form.get('strategy') == 'just' and 'value' in form:
        return {**{k: v for k, v in form.items() if k != 'value'}, 'strategy': 'sampled_from',
                'elements': [form['value']]}
    return form


def _param_order(name: str) -> Callable[[str], tuple[int, str]]:
    order = {p: i for i, (p, _, _) in enumerate(PARAMETERS.get(name, ()))}
    return lambda key: (order.get(key, len(order)), key)


def _path(where: str, name: str, key: str) -> str:
    """``lists(elements=text(alphabet))``: the path inside a strategy, as a call."""
    if not where:
        return f'{name}({key})'
    return where[:-1] + f'={name}({key}))' if where.endswith(')') else f'{where}.{name}({key})'


def _number(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def _compare_param(kind: str, locked: Any, live: Any, where: str, parent: str, name: str,
                   key: str) -> list[Difference]:
    same = locked == live
    if same:
        return []
    if is_unresolved(locked) or is_unresolved(live):
        return [Difference(where, locked, live, runtime=True)]
    wider = False
    if kind == 'min':
        wider = live is None or (_number(live) and _number(locked) and live <= locked)
    elif kind == 'size_min':
        wider = _number(live or 0) and _number(locked or 0) and (live or 0) <= (locked or 0)
    elif kind == 'max':
        wider = live is None or (_number(live) and _number(locked) and live >= locked)
    elif kind == 'flag':
        wider = live is True or locked is False
    elif kind == 'narrowing_flag':
        wider = live is False or (locked is True and live is None)
    elif kind == 'codec':
        wider = live is None
    elif kind == 'superset':  # None: every one
        wider = live is None or (_collection(live) and _collection(locked) and
                                 _items(locked) <= _items(live))
    elif kind == 'superset_or_none':  # None: none
        wider = not locked or (_collection(live) and _items(locked) <= _items(live))
    elif kind == 'subset':  # None: none excluded
        wider = not live or (_collection(live) and _collection(locked) and
                             _items(live) <= _items(locked))
    elif kind == 'elements':
        if isinstance(locked, list) and isinstance(live, list):
            have = {value_key(v) for v in live}
            missing = [v for v in locked if value_key(v) not in have]
            if not missing:
                return []
            return [Difference(where, locked, live)]
    elif kind == 'alphabet':
        return _compare_alphabet(locked, live, where)
    elif kind in ('strategy',):
        return compare(locked, live, where)
    elif kind == 'strategies':
        if isinstance(locked, list) and isinstance(live, list) and len(locked) == len(live):
            found = []
            for i, (a, b) in enumerate(zip(locked, live)):
                found.extend(compare(a, b, f'{where[:-1]}#{i + 1})'))
            return found
    elif kind == 'branches':
        return _compare_branches(locked, live, where)
    elif kind == 'mapping':
        if isinstance(locked, dict) and isinstance(live, dict) and set(locked) == set(live):
            found = []
            for k in sorted(locked):
                found.extend(compare(locked[k], live[k], f'{where[:-1]}[{k!r}])'))
            return found
    return [] if wider else [Difference(where, locked, live)]


def _collection(value: Any) -> bool:
    return isinstance(value, (list, str))


def _items(value: Any) -> set[str]:
    return {value_key(v) for v in value}


def value_key(value: Any) -> str:
    return json.dumps(value, sort_keys=True, default=repr)


def _compare_branches(locked: Any, live: Any, where: str) -> list[Difference]:
    if not (isinstance(locked, list) and isinstance(live, list)):
        return [Difference(where, locked, live)]
    found = []
    for i, branch in enumerate(locked):
        if any(not compare(branch, other) for other in live):
            continue  # some live branch covers it
        # The branch at the same place, when of the same kind, names the exact parameter.
        same_place = live[i] if i < len(live) else None
        if isinstance(same_place, dict) and isinstance(branch, dict) and \
                same_place.get('strategy') == branch.get('strategy'):
            found.extend(compare(branch, same_place, f'{where[:-1]}#{i + 1})'))
        else:
            found.append(Difference(f'{where[:-1]}#{i + 1})', branch, Shown('<no such branch>')))
    return found


def _compare_transforms(locked: list, live: list, where: str) -> list[Difference]:
    """A filter removed is wider; a map or flatmap must stay exactly as it was."""
    def steps(items: list, method: str) -> list[str]:
        return [value_key(step[method]) for step in items if method in step]

    if [s for s in live if 'filter' not in s] != [s for s in locked if 'filter' not in s]:
        return [Difference(where, _transform_text(locked), _transform_text(live))]
    added = [f for f in steps(live, 'filter') if f not in steps(locked, 'filter')]
    if added:
        return [Difference(where.replace('(transforms)', '(filter)'),
                           _transform_text(locked), _transform_text(live))]
    return []


def _transform_text(items: list) -> Shown:
    text = ''.join(f'.{next(iter(s))}({short(s[next(iter(s))])})' for s in items)
    return Shown(text or 'no transforms')


# -- alphabets ---------------------------------------------------------------------------

def _compare_alphabet(locked: Any, live: Any, where: str) -> list[Difference]:
    locked_chars = as_chars(locked)
    live_chars = as_chars(live)
    if locked_chars is not None and live_chars is not None:
        return [] if set(locked_chars) <= set(live_chars) else [Difference(where, locked, live)]
    live_node = TEXT_ALPHABET if live is None else live
    locked_node = TEXT_ALPHABET if locked is None else locked
    if locked_chars is not None and isinstance(live_node, dict) and \
            live_node.get('strategy') == 'characters':
        if all(admits(live_node, ch) for ch in locked_chars):
            return []
        return [Difference(where, locked, live)]
    if isinstance(locked_node, dict) and isinstance(live_node, dict):
        if _whole_characters(live_node):
            return []
        return compare(locked_node, live_node, where)
    return [Difference(where, locked, live)]


def as_chars(value: Any) -> str | None:
    if isinstance(value, str):
        return value
    if isinstance(value, list) and all(isinstance(v, str) and len(v) == 1 for v in value):
        return ''.join(value)
    return None


def _whole_characters(node: dict[str, Any]) -> bool:
    """characters() restricted by nothing but a Unicode codec: every character."""
    return node.get('strategy') == 'characters' and not node.get('transforms') and all(
        node.get(p) in (None, [], '') for p in ('min_codepoint', 'max_codepoint', 'categories',
                                               'exclude_categories', 'exclude_characters')
    ) and node.get('codec') in (None, 'utf-8', 'utf_8', 'utf8')


def admits(node: dict[str, Any], ch: str) -> bool:
    """Whether characters(...) with these parameters can draw ``ch``."""
    if node.get('transforms'):
        return False
    if ch in (node.get('include_characters') or ()):
        return True
    code = ord(ch)
    codec = node.get('codec')
    if codec == 'ascii' and code >= 128 or codec in ('latin-1', 'latin1') and code >= 256:
        return False
    if codec not in (None, 'ascii', 'latin-1', 'latin1', 'utf-8', 'utf_8', 'utf8'):
        return False
    if codec and codec.startswith('utf') and 0xD800 <= code <= 0xDFFF:
        return False
    low, high = node.get('min_codepoint'), node.get('max_codepoint')
    if (_number(low) and code < low) or (_number(high) and code > high):
        return False
    if any(not isinstance(node.get(p), (list, type(None))) for p in
           ('categories', 'exclude_categories')):
        return False
    category = unicodedata.category(ch)
    cats = node.get('categories')
    if cats is not None and not any(category.startswith(c) for c in cats):
        return False
    if any(category.startswith(c) for c in node.get('exclude_categories') or ()):
        return False
    return ch not in (node.get('exclude_characters') or ())


def comparable_at_run_time(locked: Any, live: Any) -> Any:
    """The live form with the parts only the source can show taken from the lock.

    At run time an expression (a ``builds`` target, an enum class) is an object, and a
    lambda's source may be unavailable; those were compared by the static hook. A part
    the lock itself could not resolve has nothing to be compared with: ``oracle-guard
    lock --collect`` locks it from a collection run.
    """
    if is_unresolved(locked) or is_unresolved(live):
        return locked
    if isinstance(locked, dict) and 'expr' in locked:
        return locked
    if isinstance(locked, dict) and isinstance(live, dict):
        merged = dict(live)
        for key, value in locked.items():
            if key in live:
                merged[key] = comparable_at_run_time(value, live[key])
        return merged
    if isinstance(locked, list) and isinstance(live, list) and len(locked) == len(live):
        return [comparable_at_run_time(a, b) for a, b in zip(locked, live)]
    return live


# -- live strategy objects ---------------------------------------------------------------


def flat_branches(branches: list) -> list:
    flat = []
    for form in branches:
        if isinstance(form, dict) and form.get('strategy') == 'one_of' and \
                not form.get('transforms'):
            flat.extend(form['branches'])
        else:
            flat.append(form)
    return flat


def strategy_composite(name: str, code: Any, arguments: dict[str, Any], draws: Any
                       ) -> dict[str, Any]:
    """A @composite function's form: its parameters bound by name, defaults filled in;
    ``draws`` None: not read (at run time only the source shows them)."""
    form = node('composite', function=name, code=code, arguments=arguments)
    if draws is None:
        form.pop('draws', None)
    else:
        form['draws'] = draws
    return form
