"""The demo's ``--ddp`` mode: start the ranks (or join them), then DDP's model, sampler and rank-0 output."""
from __future__ import annotations

import subprocess
import sys

import ember
import ember.distributed as dist
from ember.distributed.run import command, under_mpi
from ember.nn.parallel import DistributedDataParallel
from ember.utils.data import DataLoader, DistributedSampler


class DdpRun:
    """This rank's part of the job: ``lead`` is rank 0."""

    def __init__(self) -> None:
        dist.init_process_group("mpi")
        self.rank, self.world = dist.get_rank(), dist.get_world_size()
        self.lead = self.rank == 0

    def wrap(self, model: ember.nn.Module) -> DistributedDataParallel:
        return DistributedDataParallel(model)

    def loader(self, dataset, global_batch: int, seed: int) -> DataLoader:
        """Each rank reads its share of every global batch (``global_batch // world`` images)."""
        sampler = DistributedSampler(dataset, seed=seed)
        return DataLoader(dataset, batch_size=max(global_batch // self.world, 1), sampler=sampler)


def launch_or_join(argv: list, ranks: int) -> DdpRun | int:
    """Under MPI: join the job. Otherwise start ``ranks`` copies of this demo with MPI and return their status."""
    if under_mpi():
        return DdpRun()
    try:
        cmd = command(ranks, "ember.demo", list(argv), module=True)
    except FileNotFoundError as e:
        sys.exit(f"ember.demo --ddp: {e}")
    print(f"starting {ranks} ranks: {' '.join(cmd)}", flush=True)
    return subprocess.call(cmd)
