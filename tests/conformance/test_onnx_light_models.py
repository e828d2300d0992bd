"""onnx's nine light CNNs (ConstantOfShape(0.02) weights) against their shipped outputs, as onnx's runner runs them.

With constant weights the expected outputs do not depend on the input (every class gets the same score), so these
tests check that the models import, compile and run; `test_light_models_random.py` checks the numbers. Listed in
`expected_failures.txt` (group light_models) while an op they need is missing.
"""

from __future__ import annotations

import pytest
from expected_failures import conformance_params

from minimlc.tools.conformance import ConformanceTest, light_model_tests

pytestmark = pytest.mark.slow


@pytest.mark.parametrize("test", conformance_params(light_model_tests()))
def test_light_model(test: ConformanceTest) -> None:
    test.run()


def test_all_nine_light_models_are_found() -> None:
    assert [test.name for test in light_model_tests()] == [
        "light_bvlc_alexnet",
        "light_densenet121",
        "light_inception_v1",
        "light_inception_v2",
        "light_resnet50",
        "light_shufflenet",
        "light_squeezenet",
        "light_vgg19",
        "light_zfnet512",
    ]
