"""run_local equals run_cleartext bit for bit; numpy in and out; bad inputs raise
InputError; the cost model's prediction is exposed."""

import numpy as np
import pytest

import sci


def test_run_local_equals_cleartext_bit_for_bit(lenet_plan, mlp_plan, digits):
    x, _ = digits
    for plan in (lenet_plan, mlp_plan):
        for i in (0, 1, 7):
            one = x[i : i + 1]
            want = plan.run_cleartext(one)
            got = plan.run_local(one)
            assert got.dtype == np.float32 and got.shape == (1, 10)
            assert np.array_equal(got, want)


def test_edge_inputs(lenet_plan):
    for v in (0.0, 1.0, -1.0, 3.5):
        x = np.full((1, 1, 8, 8), v, dtype=np.float64)
        assert np.array_equal(lenet_plan.run_local(x), lenet_plan.run_cleartext(x))


def test_a_batch_runs_in_one_session(lenet_plan, digits):
    x, y = digits
    batch = x[:4][:, None]  # a leading batch axis over inputs of shape 1x1x8x8
    want = lenet_plan.run_cleartext(batch)
    assert want.shape == (4, 1, 10)
    got = lenet_plan.run_local(batch, threads=2)
    assert np.array_equal(got, want)
    assert (want[:, 0].argmax(axis=1) == y[:4]).mean() >= 0.75


def test_dict_inputs(lenet_plan, digits):
    x, _ = digits
    name = lenet_plan.inputs[0][0]
    a = lenet_plan.run_cleartext({name: x[:1]})
    b = lenet_plan.run_local({name: x[:1]})
    assert np.array_equal(a, b)
    assert np.array_equal(a, lenet_plan.run_cleartext(x[:1]))


def test_bad_inputs_raise_input_error(lenet_plan, digits):
    x, _ = digits
    with pytest.raises(sci.InputError, match="shape"):
        lenet_plan.run_local(x[0])
    with pytest.raises(sci.InputError, match="float32"):
        lenet_plan.run_cleartext(x[:1].astype(np.int32))
    with pytest.raises(sci.InputError, match="no input called"):
        lenet_plan.run_cleartext({"nope": x[:1]})
    with pytest.raises(sci.InputError):
        lenet_plan.run_cleartext(np.full((1, 1, 8, 8), 1e30, dtype=np.float32))


def test_the_client_view_cannot_run_alone(lenet_plan, digits):
    x, _ = digits
    with pytest.raises(sci.PlanError, match="no weights"):
        lenet_plan.client_view().run_local(x[:1])
    with pytest.raises(sci.PlanError, match="no weights"):
        lenet_plan.client_view().run_cleartext(x[:1])


def test_predict_cost(lenet_plan):
    c = lenet_plan.predict_cost("wan", inferences=2)
    first, second = c["inferences"]
    assert c["ot"] == "iknp" and c["net"] is not None
    assert first["control"]["client_bytes"] == 1 and first["control"]["server_rounds"] == 0
    # A later inference: the server hears the control byte after its reveal.
    assert second["control"]["server_rounds"] == 1
    assert second["setup"]["server_bytes"] == 0 and first["setup"]["server_bytes"] > 0
    assert first["seconds"] > 0
    # 18: the ReLU and the truncation after it run fused (relu_trunc).
    assert len(first["instructions"]) == 18
    assert sum(i["server_bytes"] for i in first["instructions"]) == first["total"]["server_bytes"]
