import pytest

from symgen.config import apply_overrides, recipe_names, resolve
from symgen.errors import UserError


def test_overrides_set_nested_values_with_types():
    cfg = resolve("reverse", ["train.steps=300", "model.d_model=64", "seed=3", "model.copy_layers=[0,1]"])
    assert cfg.train.steps == 300 and cfg.model.d_model == 64 and cfg.seed == 3
    assert cfg.model.copy_layers == [0, 1]


def test_int_is_accepted_for_float_but_not_the_reverse():
    assert resolve("reverse", ["train.lr=1"]).train.lr == 1.0
    with pytest.raises(UserError, match="model.d_model: expected int"):
        resolve("reverse", ["model.d_model=1.5"])


@pytest.mark.parametrize(
    "override, message",
    [
        ("train.stepz=3", "unknown key train.stepz"),
        ("model.tied=maybe", "model.tied: expected bool"),
        ("model.positions=sinus", "allowed are learned, rotary, none"),
        ("model.n_heads=3", "divisible"),
        ("train.steps=0", "train.steps=0 must be positive"),
        ("task.name=nope", "unknown task 'nope'"),
        ("train.loops=sometimes", "train.loops"),
        ("model.copy_layers=[5]", "out of range"),
        ("model.rotary_fraction=1.5", "must be in \\[0, 1\\]"),
    ],
)
def test_bad_values_are_refused_with_the_key_named(override, message):
    with pytest.raises(UserError, match=message):
        resolve("reverse", [override])


def test_override_without_equals_is_refused():
    with pytest.raises(UserError, match="key=value"):
        apply_overrides({}, ["train.steps"])


def test_missing_recipe_names_the_builtins():
    with pytest.raises(UserError, match="reverse"):
        resolve("no-such-recipe")


def test_reverse_is_the_first_builtin_recipe():
    assert "reverse" in recipe_names()


def test_base_recipe_merges_sections_and_replaces_lists(tmp_path):
    (tmp_path / "parent.yaml").write_text(
        "base: reverse\nname: parent\nmodel: {copy_layers: [0, 1], d_model: 48}\ntrain: {steps: 77}\n"
    )
    (tmp_path / "child.yaml").write_text("base: parent\nname: child\nmodel: {copy_layers: [1]}\n")
    reverse, child = resolve("reverse"), resolve(tmp_path / "child.yaml")
    assert child.name == "child" and child.model.copy_layers == [1]
    assert child.model.d_model == 48 and child.train.steps == 77  # from the sibling base
    assert child.train.lr == reverse.train.lr and child.task == reverse.task  # from the built-in


def test_builtin_recipes_with_a_base_differ_from_it_only_where_they_say():
    copy, standard = resolve("horn-copy"), resolve("horn-standard")
    assert copy.model.copy_layers == [3] and standard.model.copy_layers == []
    assert copy.model.copy_gate_init == 3.0
    assert copy.task == standard.task and copy.train == standard.train  # one budget for every arm
    frozen_ss = resolve("horn-copy-frozen-same-symbol")
    assert frozen_ss.model.identity_bias == 3.0 and frozen_ss.train.intervention_rows == "symbols"
    assert frozen_ss.train.freeze_embeddings and frozen_ss.model.copy_layers == [3]


def test_base_named_like_its_own_file_is_the_builtin(tmp_path):
    (tmp_path / "horn-standard.yaml").write_text("base: horn-standard\nname: mine\ntrain: {steps: 5}\n")
    mine, builtin = resolve(tmp_path / "horn-standard.yaml"), resolve("horn-standard")
    assert mine.name == "mine" and mine.train.steps == 5 and mine.model == builtin.model


@pytest.mark.parametrize(
    "files, message",
    [
        ({"a.yaml": "base: b\n", "b.yaml": "base: a\n"}, "base chain loops \\(a -> b -> a\\)"),
        ({"a.yaml": "base: [reverse]\n"}, "base must be a recipe name"),
        ({"a.yaml": "base: missing.yaml\n"}, "missing.yaml does not exist"),
        # the recipe that names a missing base is named, also deep in a chain
        ({"a.yaml": "base: b\n", "b.yaml": "base: nope\n"}, "recipe .*b.yaml: base: no recipe 'nope'"),
        ({"a.yaml": "task:\n  name: reverse\n   bad: 1\n"}, "not valid YAML: .* at line 3, column 7"),
        ({"a.yaml": "model: {d_model: 3\n"}, "not valid YAML: expected ',' or '}'.* at line 2, column 1"),
    ],
)
def test_bad_base_is_refused(tmp_path, files, message):
    for name, text in files.items():
        (tmp_path / name).write_text(text)
    with pytest.raises(UserError, match=message):
        resolve(tmp_path / "a.yaml")
