"""Tables for the shaped kernels, without a GPU: what a recorded request answers, what an unrecorded one is
ranked by, which rows are not trusted, and that memtune.run's plans follow the table."""

import numpy as np
import pytest

from memtune import shapes
from memtune.kernels import shaped
from memtune.kernels.shaped import ShapeChoice
from memtune.tuner import LookupTable, load_model
from memtune.tuner import shaped_tables as st

H100 = "NVIDIA H100 80GB HBM3"


@pytest.fixture
def machine():
    return load_model(H100).machine


def measured(choice, times: dict, machine, device=H100) -> st.Measured:
    """A request 'measured' at the given times per shape (warps, rows[, vectors, order])."""
    runs = [(p, times[tuple(p.values())], 0.001, choice.predict_ms(machine, p)) for p in choice.points()]
    return st.Measured(choice, device, runs)


def recorded(path, *results) -> list:
    for r in results:
        rows, trials = r.rows()
        LookupTable.update(path, rows, trials, replace=True)
    return [LookupTable.read(path)]


def test_a_request_is_recorded_as_the_best_of_all_its_shapes_with_every_shape_in_the_trials(tmp_path, machine):
    choice = ShapeChoice("tiles", 2, 1080, 1920, "uint8", "int32", "satpad")
    times = {s: 0.40 for s in shaped.TILE_SHAPES} | {(8, 8, 4, "ticket"): 0.30, (4, 8, 4, "ticket"): 0.25}
    result = measured(choice, times, machine)
    table = recorded(tmp_path / "t.csv", result)[0]
    row = table.frame.iloc[0]
    assert (row.kernel, row["dtype"], int(row["size"])) == ("shaped_tiles", "uint8", 2 * 1080 * 1920)
    assert row.params == '{"order": "ticket", "rows": 8, "vectors": 4, "warps": 4}' and float(row.median_ms) == 0.25
    assert int(row.best_of) == 8 == int(row.space) and bool(row.thorough) and float(row.runner_up_ms) == 0.30
    assert row.source_hash == shaped.source_hash() and len(table.trials) == 8
    answer = st.answer(choice, "H100", [table])
    assert answer.source == "measured" and answer.params == {"warps": 4, "rows": 8, "vectors": 4, "order": "ticket"}
    assert answer.median_ms == 0.25 and answer.best_of == 8


def test_an_unrecorded_request_takes_the_shape_the_neighbours_measured_fast_and_says_its_predicted_time(
        tmp_path, machine):
    """Every shape in the order of the model's pick ran 3x its prediction at both recorded neighbours, the others
    as predicted: at a size between them the corrected model moves off that order, and the predicted time is the
    corrected one. (The correction takes one effect per shape: with one effect per parameter value, the shapes of
    other orders that share no value with the slow ones came out faster than their model, which they had matched
    at both neighbours, and the answer was not the fastest of them.)"""
    new = ShapeChoice("tiles", 1, 3000, 3000, "float32", "float32", "sat")
    slow = new.model_pick(machine)["order"]
    results = []
    for side in (2048, 4096):
        c = ShapeChoice("tiles", 1, side, side, "float32", "float32", "sat")
        results.append(measured(c, {tuple(p.values()): c.predict_ms(machine, p) * (3.0 if p["order"] == slow else 1.0)
                                    for p in c.points()}, machine))
    answer = st.answer(new, "H100", recorded(tmp_path / "t.csv", *results), load_model(H100))
    assert answer.source == "interpolated" and answer.params["order"] != slow
    want = min(new.predict_ms(machine, p) for p in new.points() if p["order"] != slow)
    # its time at this size, the model's raised by the share of the slowness the free constant took up
    assert want < answer.predicted_ms < 1.5 * want
    assert answer.median_ms is None                                  # nothing was measured at this size
    assert "1x2048x2048" in answer.note and "1x4096x4096" in answer.note


def test_one_shape_slow_at_the_neighbours_moves_the_answer_to_the_next_shape_at_its_own_time(tmp_path, machine):
    """The model's pick alone ran 3x its prediction at both recorded neighbours, the seven other shapes as predicted:
    the answer between them is the model's next shape, at its model time raised only by the small share of the
    slowness the free constant takes (one effect per shape). With one effect per parameter value the answer's time
    came out 15 % under the model time it had matched at both neighbours (0.0416 against 0.0492 ms), and with the
    tiles' walk in the model (launch.walk_passes) the answer was the model's seventh shape, 21 % under its own."""
    new = ShapeChoice("tiles", 1, 3000, 3000, "float32", "float32", "sat")
    pick = tuple(new.model_pick(machine).values())
    results = []
    for side in (2048, 4096):
        c = ShapeChoice("tiles", 1, side, side, "float32", "float32", "sat")
        times = {tuple(p.values()): c.predict_ms(machine, p) * (3.0 if tuple(p.values()) == pick else 1.0)
                 for p in c.points()}
        results.append(measured(c, times, machine))
    answer = st.answer(new, "H100", recorded(tmp_path / "t.csv", *results), load_model(H100))
    others = sorted((new.predict_ms(machine, p), i, p) for i, p in enumerate(new.points()) if tuple(p.values()) != pick)
    assert answer.params == others[0][2]
    assert others[0][0] < answer.predicted_ms < 1.05 * others[0][0]


def test_requests_tied_in_nearness_are_taken_by_name_whatever_the_tables_order(tmp_path, machine):
    """Four recorded requests of 4 Mi elements, each shape at its own measured time, and a request of 2000²: the three
    nearest are a tie of four, taken by name, so the answer and its time do not follow the order the rows were
    recorded in."""
    rng = np.random.default_rng(7)
    results = [measured(c, {tuple(p.values()): c.predict_ms(machine, p) * rng.uniform(0.5, 2.0) for p in c.points()},
                        machine)
               for c in (ShapeChoice("tiles", 1, 2048, 2048, "float32", "float32", "sat"),
                         ShapeChoice("tiles", 1, 1024, 4096, "float32", "float32", "sat"),
                         ShapeChoice("tiles", 1, 4096, 1024, "float32", "float32", "sat"),
                         ShapeChoice("tiles", 16, 512, 512, "float32", "float32", "sat"))]
    asked = ShapeChoice("tiles", 1, 2000, 2000, "float32", "float32", "sat")
    one = st.answer(asked, "H100", recorded(tmp_path / "a.csv", *results), load_model(H100))
    other = st.answer(asked, "H100", recorded(tmp_path / "b.csv", *results[::-1]), load_model(H100))
    assert (one.params, one.predicted_ms, one.note) == (other.params, other.predicted_ms, other.note)
    assert "1x4096x1024" not in one.note                     # by name: 16x512x512, 1x1024x4096, 1x2048x2048 first


def test_other_types_correct_the_model_only_where_the_request_s_own_types_are_not_recorded(tmp_path, machine):
    base = ShapeChoice("tiles", 1, 2048, 2048, "float64", "float64", "sat")
    """The shapes by block index (the model's pick among them) ran 9x their model time in float64, the others as the
    model said: a uint8 request moves off them; once its own types are recorded with those shapes as the model said
    and the others 9x, it takes the model's pick."""
    first = {"warps": 8, "rows": 16, "vectors": 2, "order": "index"}

    def timed(choice, slow):
        return measured(choice, {tuple(p.values()): choice.predict_ms(machine, p) * (9.0 if slow(p) else 1.0)
                                 for p in choice.points()}, machine)

    tables = recorded(tmp_path / "t.csv", timed(base, lambda p: p["order"] == "index"))
    asked = ShapeChoice("tiles", 1, 3000, 3000, "uint8", "int32", "sat")
    assert asked.model_pick(machine) == first
    assert st.answer(asked, "H100", tables, load_model(H100)).params["order"] != "index"
    same = ShapeChoice("tiles", 1, 2048, 2048, "uint8", "int32", "sat")
    tables = recorded(tmp_path / "t.csv", timed(same, lambda p: p["order"] != "index"))
    assert st.answer(asked, "H100", tables, load_model(H100)).params == first


def test_rows_of_another_source_another_device_or_mode_do_not_answer(tmp_path, machine):
    choice = ShapeChoice("strips", 1, 4096, 1024, "float32", "float32", "cols")
    result = measured(choice, {s: 1.0 + i for i, s in enumerate(shaped.STRIP_SHAPES)}, machine)
    path = tmp_path / "t.csv"
    table = recorded(path, result)[0]
    assert st.answer(choice, "H200", [table]).source == "model"                # recorded on the H100 only
    other_mode = ShapeChoice("strips", 1, 4096, 1024, "float32", "float32", "coltotal")
    assert st.answer(other_mode, "H100", [table]).source == "model"
    table.frame.loc[:, "source_hash"] = "0123456789ab"                      # measured with another shaped.cu
    with pytest.warns(Warning, match="another source"):
        stale = st.answer(choice, "H100", [table])
    assert stale.source == "model" and stale.params == choice.model_pick(machine)
    assert st.answer(choice, None, [table]).params == choice.points()[0]      # no device: the first shape


def test_memtune_run_plans_in_the_shape_the_table_answers(data_dir, machine):
    a = np.zeros((1080, 1920), np.uint8)
    req = shapes.request("sat", a, {"dtype": "int32", "layout": "opencv"})
    choice = shapes.shape_choice(req)
    assert choice == ShapeChoice("tiles", 1, 1080, 1920, "uint8", "int32", "satpad")
    least = {s: 1.0 for s in shaped.TILE_SHAPES}
    unlikely = next(s for s in shaped.TILE_SHAPES if s != tuple(choice.model_pick(machine).values()))
    least[unlikely] = 0.5
    recorded(None, measured(choice, least, machine))                     # the data directory's table
    shapes.plan.cache_clear()
    w, r, v, o = unlikely
    assert shapes.plan(req, H100).launches[-1].function == f"tiles_u8_i32_satpad_w{w}_r{r}_v{v}{shaped.TILE_ORDERS[o]}"
    assert shapes.shape_choice(shapes.request("sum", a, {"axis": 1})) is None         # along the rows: no choice
    assert shapes.shape_choice(shapes.request("sum", a, {"axis": 0})).kind == "strips"


def test_the_ladder_holds_the_shapes_users_have_once_each_and_every_one_plans():
    keys = [c.table_key for c in st.LADDER]
    assert len({(k, d, s, str(c)) for k, d, s, c in keys}) == len(st.LADDER)
    layouts = {(c.kind, c.images, c.h, c.w) for c in st.LADDER}
    assert {("tiles", 1, 1080, 1920), ("tiles", 1, 2160, 3840), ("tiles", 1, 4096, 1024), ("tiles", 16, 512, 512),
            ("strips", 1, 1024, 4096)} <= layouts
    assert ("uint8", "int32", "satpad") in {(c.src, c.dst, c.mode) for c in st.LADDER}
    for c in st.LADDER:
        for p in c.points():
            assert c.plan(p).launches[-1].function.startswith(c.kind)


def test_a_table_row_reads_back_as_the_request_it_keys():
    import json

    for choice in (ShapeChoice("tiles", 3, 100, 257, "uint8", "int32", "satpad"),
                   ShapeChoice("strips", 1, 65536, 64, "int32", "int64", "coltotal")):
        kernel, dtype, _, case = choice.table_key
        assert ShapeChoice.of_row(kernel, dtype, json.dumps(case, sort_keys=True)) == choice
    assert ShapeChoice.of_row("shaped_tiles", "float32", '{"layout": [1, 8, 8], "dst": "float32", "mode": "coltotal"}') is None
    assert ShapeChoice.of_row("shaped_tiles", "float32", "{}") is None


def test_a_shape_recorded_before_the_tile_order_was_a_choice_reads_as_the_ticketed_kernel_it_ran(tmp_path, machine):
    """Rows and trials written before tiles took an order hold (warps, rows, vectors) alone: they plan the ticketed
    kernel, and the neighbours' correction reads them with order 'ticket'."""
    import json

    choice = ShapeChoice("tiles", 1, 2048, 2048, "float32", "float32", "sat")
    legacy = {"warps": 4, "rows": 8, "vectors": 4}
    assert choice.filled(legacy) == {**legacy, "order": "ticket"}
    assert choice.plan(legacy).launches[-1].function == "tiles_f32_f32_sat_w4_r8_v4"
    table = recorded(tmp_path / "t.csv", measured(choice, {s: 1.0 + i for i, s in enumerate(shaped.TILE_SHAPES)},
                                                  machine))[0]
    old = table.trials.params.map(json.loads).map(lambda p: p["order"] == "ticket")
    table.trials.loc[old, "params"] = table.trials.params[old].map(
        lambda p: json.dumps({k: v for k, v in json.loads(p).items() if k != "order"}, sort_keys=True))
    asked = ShapeChoice("tiles", 1, 3000, 3000, "float32", "float32", "sat")
    seen = st._recorded(asked, [table], H100)
    assert len(seen) == 8 and all(set(p) == {"warps", "rows", "vectors", "order"} for _, p, _ in seen)
    assert sorted(ms for _, p, ms in seen if p["order"] == "ticket") == [1.0, 2.0, 3.0, 4.0]
