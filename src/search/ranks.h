// The ranks a search runs on: an MPI communicator, or none.
//
// `distir search` started without an MPI launcher (no mpirun, srun or
// mpiexec) runs as one process that never starts MPI: Open MPI's singleton
// start (it forks an orted and reads the machine's topology) costs about
// 0.1 CPU-s, as much as a small search (MLP-1B at one batch, 75
// configurations). The search's collectives take MPI_COMM_NULL for that
// process and do what they would on one rank.

#pragma once

#include <mpi.h>

namespace distir::search {

/// True when an MPI launcher started this process (Open MPI's mpirun or
/// PMIx: OMPI_COMM_WORLD_SIZE or PMIX_RANK; MPICH's hydra, Slurm's PMI-1 and
/// PMI-2: PMI_RANK or PMI_SIZE in the environment), so MPI_Init joins the
/// others; false for a process started on its own.
bool LaunchedByMpi();

/// The rank of this process in `comm`, and the number of ranks; MPI_COMM_NULL
/// (no MPI) is rank 0 of 1.
int RankIn(MPI_Comm comm);
int SizeOf(MPI_Comm comm);

/// MPI_Bcast from rank 0 of `comm`; nothing for MPI_COMM_NULL.
void BroadcastFromFirst(void* data, int count, MPI_Datatype type, MPI_Comm comm);

}  // namespace distir::search
