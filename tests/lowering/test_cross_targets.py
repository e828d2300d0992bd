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
from minimlc.lowering.pipeline import llvm_opt_level, make_context, run_passes, run_pipeline
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
            256,  # its SVE vectors
            (64 * KB, MB, 32 * MB),
        ),
        (
            "aarch64-linux-gnu -mcpu=neoverse-v1 -mattr=-sve",
            "aarch64-linux-gnu -mcpu=neoverse-v1 -mattr=-sve",
            "neoverse-v1",
            "+neon,+fp-armv8,-sve",
            128,
            (64 * KB, MB, 32 * MB),
        ),
        (
            "aarch64-linux-gnu -msve-vector-bits=512 -mattr=+sve",
            "aarch64-linux-gnu -mattr=+sve -msve-vector-bits=512",
            "generic",
            "+neon,+fp-armv8,+sve",
            512,
            None,
        ),
        ("aarch64-linux-gnu -mcpu=neoverse-n1", None, "neoverse-n1", "+neon,+fp-armv8", 128, (64 * KB, MB, 32 * MB)),
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
    text: str, name: str | None, cpu: str, features: str, vector_bits: int, caches: tuple[int, int, int] | None
) -> None:
    target = target_from_name(text)
    name = name or text
    assert (target.name, target.cpu, target.features, target.vector_bits) == (name, cpu, features, vector_bits)
    assert target.triple == text.split()[0]
    assert target.vector_registers == 32
    assert target.vector_lanes == vector_bits // 32
    assert target.cache_bytes == (caches or (32 * KB, MB, 32 * MB))
    assert target.dot_u8s8_bits == (128 if cpu == "neoverse-v1" else 0)  # I8MM's usdot; else the expansion
    assert target.dot_u8s8_udot_bits == (128 if cpu == "neoverse-n1" else 0)  # udot without I8MM
    assert target.sve_bits == (vector_bits if target.arch == "aarch64" and vector_bits > 128 else 0)
    assert not target.is_x86
    assert target_from_name(target.name) == target  # the canonical name parses back to the same target


@pytest.mark.parametrize(
    ("text", "udot", "usdot"),
    [
        ("aarch64-linux-gnu -mcpu=cortex-a76", 128, 0),
        ("aarch64-linux-gnu -mattr=+dotprod", 128, 0),
        ("aarch64-linux-gnu -mcpu=neoverse-n2", 0, 128),  # I8MM's usdot wins
        ("aarch64-linux-gnu -mcpu=neoverse-v1 -mattr=-i8mm", 128, 0),
        ("aarch64-linux-gnu -mcpu=neoverse-n1 -mattr=-dotprod", 0, 0),
        ("aarch64-linux-gnu", 0, 0),
        ("x86-64-v3", 0, 0),
    ],
)
def test_the_dot_product_form_follows_the_cpus_extensions(text: str, udot: int, usdot: int) -> None:
    target = target_from_name(text)
    assert (target.dot_u8s8_udot_bits, target.dot_u8s8_bits) == (udot, usdot)
    assert target.has_fast_dot_u8s8 == bool(udot or usdot or target.is_x86)


def test_rvv_neon_and_sve_are_described_by_their_isa() -> None:
    assert target_from_name("aarch64-linux-gnu -mcpu=neoverse-n1").describe() == (
        "aarch64-linux-gnu -mcpu=neoverse-n1 (neon, 4 f32 lanes, 32 vector registers)"
    )
    assert target_from_name("aarch64-linux-gnu -mcpu=neoverse-v1").describe() == (
        "aarch64-linux-gnu -mcpu=neoverse-v1 (sve256, 8 f32 lanes, 32 vector registers)"
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
            r"target 'aarch64-linux-gnu -O3': cannot read '-O3'; expected -mcpu=CPU or -mattr=\+FEATURE,... or "
            r"-msve-vector-bits=N$",
        ),
        (
            "aarch64-linux-gnu -mattr=+sve -msve-vector-bits=384",
            r"-msve-vector-bits=384 is not a length LLVM fixes; expected 256, 512, 1024 or 2048$",
        ),
        (
            "aarch64-linux-gnu -mcpu=neoverse-n1 -msve-vector-bits=256",
            r"-msve-vector-bits needs SVE: add -mattr=\+sve or name a CPU with it$",
        ),
        (
            "riscv64-linux-gnu -msve-vector-bits=256",
            r"cannot read '-msve-vector-bits=256'; expected -mcpu=CPU or -mattr=\+FEATURE,...$",
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
        ("aarch64-linux-gnu -mcpu=neoverse-v1", r"fmla\tz\d+\.s, p\d+/m, z\d+\.s, z\d+\.s", 16),  # SVE 256
        ("riscv64-linux-gnu -mattr=+v", r"vfmacc\.vf\tv\d+, fa\d+, v\d+", 4),  # RVV: 16 lanes (LMUL 4) per row
        ("riscv64-linux-gnu", r"fmadd\.s\t", 64),  # no V: scalar multiply-adds
    ],
)
def test_the_matmul_tile_is_the_targets_own_fma(target: str, fma: str, count: int) -> None:
    """The GEMM register tile, built for another CPU, is its own vector FMA (counted in the assembly), never x86."""
    module = Parser(make_context(), MATMUL_RELU).parse_module()
    run_pipeline(module, 3, target=target)
    machine = target_machine(target_from_name(target))
    assembly = machine.emit_assembly(
        optimized_module(translate_to_llvm_ir(module), machine, llvm_opt_level(3), sealed=True)
    )
    assert len(re.findall(fma, assembly)) == count
    assert not re.search(r"%[xyz]mm|vfmadd\d+ps", assembly)


def gemm_inner_loop(target: str, rows: int) -> tuple[str, list[str]]:
    """The one inner loop of a `rows` x 64 x 64 GEMM built for `target`: its assembly, and its mnemonics."""
    module = Parser(make_context(), MATMUL_RELU.replace("16x64", f"{rows}x64")).parse_module()
    run_pipeline(module, 3, target=target)
    machine = target_machine(target_from_name(target))
    assembly = machine.emit_assembly(
        optimized_module(translate_to_llvm_ir(module), machine, llvm_opt_level(3), sealed=True)
    )
    loop = re.search(r"^(\.LBB\w+):\n(.*?)\n\tb\.ne\t\1$", assembly, re.M | re.S)
    assert loop is not None
    body = loop.group(2)
    assert "sp" not in re.findall(r"\[(\w+)", body)  # spills nothing: no stack access in the loop
    return body, [line.split()[0] for line in body.splitlines() if line.startswith("\t")]


@pytest.mark.parametrize("target", ["aarch64-linux-gnu", "aarch64-linux-gnu -mcpu=neoverse-v1 -mattr=-sve"])
def test_the_aarch64_gemm_tile_fills_the_32_vector_registers(target: str) -> None:
    """A 24-row GEMM built for AArch64 gets a 6 x 16 register tile: its inner loop is 24 fmla (6 rows x 4 vectors,
    accumulators in 24 of the 32 registers) on 4 vectors of B (two ldp) and 6 values of A, and spills nothing (no
    stack access in the loop); 8 x 8, the tile of two vectors, was 16 fmla per 10 loads."""
    body, instructions = gemm_inner_loop(target, 24)
    assert instructions.count("fmla") == 24
    assert len(set(re.findall(r"fmla\tv(\d+)\.4s", body))) == 24  # 24 accumulators
    assert instructions.count("ldp") == 2
    assert len(re.findall(r"\tldp\tq\d+, q\d+", body)) == 2  # B: 4 vectors
    assert sum(instructions.count(load) for load in ("ld1r", "ldr", "ldur")) == 6  # A: a value per row


def test_the_sve_gemm_tile_is_predicated_fmla_on_256_bit_vectors() -> None:
    """neoverse-v1's 256-bit SVE: the 24-row GEMM's tile is 6 rows x 4 vectors of 8 lanes (6 x 32), 24 predicated
    `fmla z.s` into 24 accumulators, with 4 vectors of B and a broadcast value of A per row live: 29 of the 32
    registers; loads are 4 of B and 6 of A, each broadcast by a `mov z.s` (the 8 x 16 tile of two vectors was 16 fmla
    per 10 loads)."""
    body, instructions = gemm_inner_loop("aarch64-linux-gnu -mcpu=neoverse-v1", 24)
    fmla = re.findall(r"\tfmla\tz(\d+)\.s, p\d+/m, z(\d+)\.s, z(\d+)\.s", body)
    assert len(fmla) == instructions.count("fmla") == 24
    assert len({accumulator for accumulator, _, _ in fmla}) == 24
    assert len({register for _, *sources in fmla for register in sources}) == 5  # 4 of B, 1 of A
    vector_loads = re.findall(r"\t(?:ldr\tz\d+|ld1[bw]\t\{ z\d+)", body)
    assert len(vector_loads) == 4
    assert len(re.findall(r"\tldr\ts\d+", body)) == len(re.findall(r"\tmov\tz\d+\.s, s\d+", body)) == 6
    assert not re.search(r"\tfmla\tv", body)


def test_sve_functions_carry_vscale_range_alike_in_both_paths() -> None:
    """Every function defined for a fixed SVE length carries `vscale_range(N,N)` (N = bits / 128), from the direct
    emitter as from convert-to-llvm and translation; NEON and x86 functions carry none."""
    for target, attribute in [
        ("aarch64-linux-gnu -mcpu=neoverse-v1", " vscale_range(2,2)"),
        ("aarch64-linux-gnu -mattr=+sve -msve-vector-bits=512", " vscale_range(4,4)"),
        ("aarch64-linux-gnu -mcpu=neoverse-n1", None),
        ("x86-64-v3", None),
    ]:
        module = Parser(make_context(), MATMUL_RELU).parse_module()
        run_pipeline(module, 3, stop_after="scf", target=target)
        run_passes(module, ["cse", "convert-scf-to-cf"])
        direct = emit_llvm_ir(module.clone())
        run_passes(module, ["convert-to-llvm", "reconcile-unrealized-casts"])
        assert canonical_llvm_ir(direct) == canonical_llvm_ir(translate_to_llvm_ir(module))
        defines = [line for line in direct.splitlines() if line.startswith("define ")]
        assert len(defines) >= 3  # the entry, its packed form, the fused kernel (and its parallel body)
        assert all(line.endswith(attribute) for line in defines) if attribute else "vscale_range" not in direct


@pytest.mark.parametrize(
    ("target", "intrinsic", "instruction"),
    [
        ("aarch64-linux-gnu -mcpu=neoverse-v1", "usdot", r"\tusdot\tv\d+\.4s, v\d+\.16b, v\d+\.16b"),
        ("aarch64-linux-gnu -mcpu=neoverse-n1", "udot", r"\tudot\tv\d+\.4s, v\d+\.16b, v\d+\.16b"),
    ],
)
def test_the_dot_product_is_alike_in_both_paths_and_parses(target: str, intrinsic: str, instruction: str) -> None:
    """A quantized block built for neoverse-v1 (I8MM) or neoverse-n1 (dot product, no I8MM): its dot products are
    `usdot` or `udot` calls, the same LLVM IR from the direct emitter as from convert-to-llvm and translation, and
    LLVM's AArch64 back end takes it."""
    module = import_model(quantized_resnet(channels=8, size=8, blocks=1)).module
    run_pipeline(module, 3, stop_after="scf", target=target)
    run_passes(module, ["cse", "convert-scf-to-cf"])
    direct = emit_llvm_ir(module.clone())
    run_passes(module, ["convert-to-llvm", "reconcile-unrealized-casts"])
    assert canonical_llvm_ir(direct) == canonical_llvm_ir(translate_to_llvm_ir(module))
    assert direct.count(f"call <4 x i32> @llvm.aarch64.neon.{intrinsic}.v4i32.v16i8(") > 0
    assert "llvm.x86" not in direct
    machine = target_machine(target_from_name(target))
    assert re.search(
        instruction, machine.emit_assembly(optimized_module(direct, machine, llvm_opt_level(3), sealed=True))
    )


def conv_dot_product_loops(target: str) -> list[str]:
    """The assembly of each innermost loop holding dot products in the quantized block's convolutions for `target`."""
    module = import_model(quantized_resnet(channels=8, size=14, blocks=1)).module
    run_pipeline(module, 3, target=target)
    machine = target_machine(target_from_name(target))
    assembly = machine.emit_assembly(
        optimized_module(translate_to_llvm_ir(module), machine, llvm_opt_level(3), sealed=True)
    )
    functions = re.split(r"^(\w+):$", assembly, flags=re.M)
    conv = "".join(code for name, code in zip(functions[1::2], functions[2::2], strict=True) if "conv" in name)
    loops = re.finditer(r"^(\.LBB\w+):\n((?:(?!\.LBB).*\n)*?)\tb\.\w+\t\1$", conv, re.M)
    bodies = [loop.group(2) for loop in loops if re.search(r"\tu(?:s)?dot\t", loop.group(2))]
    assert bodies
    return bodies


def test_the_sve_int8_conv_loop_is_neon_dot_products_without_joins() -> None:
    """On neoverse-v1 (SVE 256) the int8 conv tile is of 128-bit vectors, the `usdot`'s: its loop is 2 `usdot` per
    output column (8 channels) and no `ext`/`splice`, which joined the `usdot` halves of 8-lane vectors."""
    for body in conv_dot_product_loops("aarch64-linux-gnu -mcpu=neoverse-v1"):
        assert not re.search(r"\t(?:ext|splice)\t", body)
        assert len(re.findall(r"\tusdot\tv\d+\.4s, v\d+\.16b, v\d+\.16b", body)) % 2 == 0


def test_the_udot_conv_tile_leaves_registers_for_the_row_sums() -> None:
    """On neoverse-n1 (two `udot` per piece) the int8 conv tile is sized for each column's row sum: its loop reloads
    nothing from the stack (the 14 x 2 tile sized for `usdot` spilled), 2 product `udot` and a row sum per column."""
    for body in conv_dot_product_loops("aarch64-linux-gnu -mcpu=neoverse-n1"):
        assert "[sp" not in body
        assert len(re.findall(r"\tudot\tv\d+\.4s, v\d+\.16b, v\d+\.16b", body)) % 3 == 0


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
