#include "search/ranks.h"

#include <cstdlib>
#include <initializer_list>

namespace distir::search {

bool LaunchedByMpi() {
  for (const char* name : {"OMPI_COMM_WORLD_SIZE", "PMIX_RANK", "PMI_RANK", "PMI_SIZE"}) {
    if (std::getenv(name) != nullptr) return true;
  }
  return false;
}

int RankIn(MPI_Comm comm) {
  int rank = 0;
  if (comm != MPI_COMM_NULL) MPI_Comm_rank(comm, &rank);
  return rank;
}

int SizeOf(MPI_Comm comm) {
  int size = 1;
  if (comm != MPI_COMM_NULL) MPI_Comm_size(comm, &size);
  return size;
}

void BroadcastFromFirst(void* data, int count, MPI_Datatype type, MPI_Comm comm) {
  if (comm != MPI_COMM_NULL) MPI_Bcast(data, count, type, 0, comm);
}

}  // namespace distir::search
