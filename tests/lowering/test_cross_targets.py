"""Targets of other CPUs, named by triple (`aarch64-linux-gnu -mcpu=neoverse-v1`): parsed into the one `Target`,
spelled canonically in the module's `minimlc.target`, refused with one line naming what is known, and never run in
this process. The x86 CPU names keep the host's triple."""

from __future__ import annotations

import re
from pathlib import Path

import llvmlite.binding as llvm
import numpy as np
import pytest
from model_builder import ModelBuilder
from onnx import TensorProto, helper
from quantized_resnet import quantized_resnet
from xdsl.dialects.builtin import ModuleOp
from xdsl.parser import Parser

import minimlc
from minimlc import InferenceSession
from minimlc.frontend.onnx import import_model
from minimlc.lowering import target as target_module
from minimlc.lowering.llvm.emit_ir import canonical_llvm_ir, emit_llvm_ir
from minimlc.lowering.llvm.translate import translate_to_llvm_ir
from minimlc.lowering.pipeline import make_context, run_passes, run_pipeline
from minimlc.lowering.target import (
    TARGET_ATTR,
    TargetNotRunnableError,
    baseline_target,
    host_arch,
    known_targets,
    set_target,
    target_from_name,
    target_machine,
    target_of,
)
from minimlc.runtime import artifact
from minimlc.runtime.jit import optimized_module

KB, MB = 1 << 10, 1 << 20


@pytest.mark.parametrize(
    ("text", "name", "cpu", "features", "vector_bits", "caches"),
    [
        ("aarch64-linux-gnu", "aarch64-linux-gnu", "generic", "+neon,+fp-armv8", 128, (32 * KB, MB, 32 * MB)),
        (
            "aarch64-linux-gnu   -mcpu=neoverse-v1",
            "aarch64-linux-gnu -mcpu=neoverse-v1",
            "neoverse-v1",
            "+neon,+fp-armv8",
            128,
            (64 * KB, MB, 32 * MB),
        ),
        ("aarch64-linux-gnu -mcpu=generic", "aarch64-linux-gnu", "generic", "+neon,+fp-armv8", 128, None),
        ("riscv64-linux-gnu", "riscv64-linux-gnu", "generic-rv64", "+m,+a,+f,+d,+c", 128, None),
        ("riscv64-linux-gnu -mattr=+v", "riscv64-linux-gnu -mattr=+v", "generic-rv64", "+m,+a,+f,+d,+c,+v", 128, None),
        (
            "riscv64-linux-gnu -mattr=+v,+zvl256b",
            "riscv64-linux-gnu -mattr=+v,+zvl256b",
            "generic-rv64",
            "+m,+a,+f,+d,+c,+v,+zvl256b",
            256,
            None,
        ),
        ("riscv64-linux-gnu -mattr=-c", "riscv64-linux-gnu -mattr=-c", "generic-rv64", "+m,+a,+f,+d,-c", 128, None),
        (
            "riscv64-linux-gnu -mcpu=sifive-x280",
            "riscv64-linux-gnu -mcpu=sifive-x280",
            "sifive-x280",
            "+m,+a,+f,+d,+c",
            512,
            (32 * KB, 256 * KB, 2 * MB),
        ),
    ],
)
def test_a_triple_with_options_parses_into_the_target(
    text: str, name: str, cpu: str, features: str, vector_bits: int, caches: tuple[int, int, int] | None
) -> None:
    target = target_from_name(text)
    assert (target.name, target.cpu, target.features, target.vector_bits) == (name, cpu, features, vector_bits)
    assert target.triple == text.split()[0]
    assert target.vector_registers == 32
    assert target.vector_lanes == vector_bits // 32
    assert target.cache_bytes == (caches or (32 * KB, MB, 32 * MB))
    assert target.dot_u8s8_bits == (128 if cpu == "neoverse-v1" else 0)  # I8MM's usdot; else the expansion
    assert not target.is_x86
    assert target_from_name(target.name) == target  # the canonical name parses back to the same target


def test_rvv_and_neon_are_described_by_their_isa() -> None:
    assert target_from_name("aarch64-linux-gnu -mcpu=neoverse-v1").describe() == (
        "aarch64-linux-gnu -mcpu=neoverse-v1 (neon, 4 f32 lanes, 32 vector registers)"
    )
    assert "(rvv, 8 f32 lanes" in target_from_name("riscv64-linux-gnu -mattr=+v,+zvl256b").describe()
    assert "(rv64gc, 4 f32 lanes" in target_from_name("riscv64-linux-gnu").describe()
    assert "(rvv, 16 f32 lanes" in target_from_name("riscv64-linux-gnu -mcpu=sifive-x280").describe()


@pytest.mark.parametrize("name", ["x86-64-v3", "skylake-avx512", "host"])
def test_x86_names_keep_the_hosts_triple(name: str) -> None:
    target = target_from_name(name)
    assert target.triple == llvm.get_default_triple()
    assert target.is_x86
    assert target.name == name


def test_known_targets_list_the_triples_after_the_x86_cpus() -> None:
    known = known_targets()
    assert known[0] == "host"
    assert "znver4" in known
    assert known[-2:] == ["aarch64-linux-gnu", "riscv64-linux-gnu"]


@pytest.mark.parametrize(
    ("text", "message"),
    [
        (
            "arm64-linux-gnu",
            r"unknown target CPU 'arm64-linux-gnu'; known: host, x86-64, .*znver5, or a triple "
            r"\(aarch64-linux-gnu, riscv64-linux-gnu\) with -mcpu=CPU and -mattr=\+FEATURE,...$",
        ),
        (
            "aarch64-linux-gnu -mcpu=pentium4",
            r"LLVM [\d.]+ knows no aarch64 CPU 'pentium4' \(for aarch64-linux-gnu\); for example: neoverse-n1, .*$",
        ),
        (
            "riscv64-linux-gnu -mcpu=neoverse-v1",
            r"knows no riscv64 CPU 'neoverse-v1' \(for riscv64-linux-gnu\); for example: sifive-x280, spacemit-x60$",
        ),
        (
            "aarch64-linux-gnu -O3",
            r"target 'aarch64-linux-gnu -O3': cannot read '-O3'; expected -mcpu=CPU or -mattr=\+FEATURE,...$",
        ),
        ("aarch64-linux-gnu -mattr=neon", r"cannot read '-mattr=neon'"),
        ("riscv64-linux-gnu -mcpu=", r"cannot read '-mcpu='"),
        ("riscv64-linux-gnu -mattr=+v,", r"cannot read '-mattr=\+v,'"),
    ],
)
def test_a_bad_target_is_refused_in_one_line(text: str, message: str) -> None:
    with pytest.raises(ValueError, match=message) as error:
        target_from_name(text)
    assert "\n" not in str(error.value)


def test_the_module_attribute_carries_the_canonical_name_and_round_trips() -> None:
    module = ModuleOp([])
    set_target(module, "aarch64-linux-gnu  -mcpu=neoverse-v1")
    printed = str(module)
    assert f'{TARGET_ATTR} = "aarch64-linux-gnu -mcpu=neoverse-v1"' in printed
    parsed = Parser(make_context(), printed).parse_module()
    assert target_of(parsed) == target_from_name("aarch64-linux-gnu -mcpu=neoverse-v1")
    set_target(module, "x86-64-v3")  # the x86 spelling is unchanged
    assert f'{TARGET_ATTR} = "x86-64-v3"' in str(module)


def test_code_for_another_architecture_is_refused_in_process() -> None:
    target = target_from_name("riscv64-linux-gnu -mattr=+v")
    assert target.missing_on_host() == ["riscv64"]
    b = ModelBuilder(seed=1)
    model = b.model([1, 8], b.node("Relu", ["x"], "y"), [1, 8])
    with pytest.raises(TargetNotRunnableError, match=r"^target 'aarch64-linux-gnu' is aarch64 code and this host is "):
        InferenceSession(model, target="aarch64-linux-gnu")


MATMUL_RELU = """
func.func @main(%x: tensor<16x64xf32>, %w: tensor<64x64xf32>) -> tensor<16x64xf32> {
  %y = graph.matmul %x, %w : (tensor<16x64xf32>, tensor<64x64xf32>) -> tensor<16x64xf32>
  %r = graph.relu %y : tensor<16x64xf32>
  func.return %r : tensor<16x64xf32>
}
"""


@pytest.mark.parametrize(
    ("target", "fma", "count"),
    [
        ("aarch64-linux-gnu", r"fmla\tv\d+\.4s, v\d+\.4s, v\d+\.", 16),  # NEON: by element, or of a broadcast
        ("aarch64-linux-gnu -mcpu=neoverse-v1", r"fmla\tv\d+\.4s", 16),
        ("riscv64-linux-gnu -mattr=+v", r"vfmacc\.vf\tv\d+, fa\d+, v\d+", 4),  # RVV: 16 lanes (LMUL 4) per row
        ("riscv64-linux-gnu", r"fmadd\.s\t", 64),  # no V: scalar multiply-adds
    ],
)
def test_the_matmul_tile_is_the_targets_own_fma(target: str, fma: str, count: int) -> None:
    """The GEMM register tile, built for another CPU, is its own vector FMA (counted in the assembly), never x86."""
    module = Parser(make_context(), MATMUL_RELU).parse_module()
    run_pipeline(module, 3, target=target)
    machine = target_machine(target_from_name(target))
    assembly = machine.emit_assembly(optimized_module(translate_to_llvm_ir(module), machine, 3))
    assert len(re.findall(fma, assembly)) == count
    assert not re.search(r"%[xyz]mm|vfmadd\d+ps", assembly)


@pytest.mark.parametrize("target", ["aarch64-linux-gnu", "aarch64-linux-gnu -mcpu=neoverse-v1"])
def test_the_aarch64_gemm_tile_fills_the_32_vector_registers(target: str) -> None:
    """A 24-row GEMM built for AArch64 gets a 6 x 16 register tile: its inner loop is 24 fmla (6 rows x 4 vectors,
    accumulators in 24 of the 32 registers) on 4 vectors of B (two ldp) and 6 values of A, and spills nothing (no
    stack access in the loop); 8 x 8, the tile of two vectors, was 16 fmla per 10 loads."""
    module = Parser(make_context(), MATMUL_RELU.replace("16x64", "24x64")).parse_module()
    run_pipeline(module, 3, target=target)
    machine = target_machine(target_from_name(target))
    assembly = machine.emit_assembly(optimized_module(translate_to_llvm_ir(module), machine, 3))
    loop = re.search(r"^(\.LBB\w+):\n(.*?)\n\tb\.ne\t\1$", assembly, re.M | re.S)  # the one inner loop
    assert loop is not None
    body = loop.group(2)
    instructions = [line.split()[0] for line in body.splitlines() if line.startswith("\t")]
    assert instructions.count("fmla") == 24
    assert len(set(re.findall(r"fmla\tv(\d+)\.4s", body))) == 24  # 24 accumulators
    assert instructions.count("ldp") == 2
    assert len(re.findall(r"\tldp\tq\d+, q\d+", body)) == 2  # B: 4 vectors
    assert sum(instructions.count(load) for load in ("ld1r", "ldr", "ldur")) == 6  # A: a value per row
    assert "sp" not in re.findall(r"\[(\w+)", body)


def test_usdot_is_emitted_alike_by_both_paths_and_parses() -> None:
    """A quantized block built for neoverse-v1 (I8MM): its dot products are `usdot` calls, the same LLVM IR from the
    direct emitter as from convert-to-llvm and translation, and LLVM's AArch64 back end takes it."""
    target = "aarch64-linux-gnu -mcpu=neoverse-v1"
    module = import_model(quantized_resnet(channels=8, size=8, blocks=1)).module
    run_pipeline(module, 3, stop_after="scf", target=target)
    run_passes(module, ["cse", "convert-scf-to-cf"])
    direct = emit_llvm_ir(module.clone())
    run_passes(module, ["convert-to-llvm", "reconcile-unrealized-casts"])
    assert canonical_llvm_ir(direct) == canonical_llvm_ir(translate_to_llvm_ir(module))
    assert direct.count("call <4 x i32> @llvm.aarch64.neon.usdot.v4i32.v16i8(") > 0
    assert "llvm.x86" not in direct
    machine = target_machine(target_from_name(target))
    assert "usdot\tv" in machine.emit_assembly(optimized_module(direct, machine, 3))


def test_a_model_without_code_is_saved_for_any_cpu_of_the_hosts_architecture(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A model whose outputs are all constants records the architecture's baseline (x86: x86-64, with no features
    required), so it loads on any CPU of that architecture; on an AArch64 host the baseline is its triple's."""
    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, 3])
    shape = helper.make_tensor_value_info("shape", TensorProto.INT64, [2])
    graph = helper.make_graph([helper.make_node("Shape", ["x"], ["shape"])], "shape", [x], [shape])
    session = InferenceSession(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)]))
    assert session.llvm_ir == ""
    session.save(tmp_path / "shape.mlc")
    meta, _ = artifact.read_file(tmp_path / "shape.mlc")
    assert meta["target"]["name"] == baseline_target().name
    assert host_arch() != "x86_64" or baseline_target() == target_from_name("x86-64")
    assert meta["target"]["required_features"] == []
    loaded = minimlc.load(tmp_path / "shape.mlc")
    np.testing.assert_array_equal(loaded.run(None, {"x": np.ones((2, 3), np.float32)})[0], [2, 3])
    monkeypatch.setattr(target_module, "host_arch", lambda: "aarch64")
    assert baseline_target() == target_from_name("aarch64-linux-gnu")
