"""Schedules in Python, TVM's TensorIR schedule API over minimlc's loop passes: `from minimlc.schedule import
Schedule` (see `minimlc.schedule.schedule`); `minimlc.build` compiles a scheduled function."""

from minimlc.schedule.schedule import PRIMITIVES, BlockRV, LoopRV, Schedule, ScheduleError, Trace

__all__ = ["PRIMITIVES", "BlockRV", "LoopRV", "Schedule", "ScheduleError", "Trace"]
