// Sparse matrices on the host: compressed sparse row (CSR), its ELL form, and a reader of the
// Matrix Market exchange format (https://math.nist.gov/MatrixMarket/formats.html), the format of
// the SuiteSparse collection, so that labs can run on real matrices.
#pragma once

#include <stdexcept>
#include <string>
#include <vector>

namespace cudalab {

// Row r holds entries row_ptr[r] .. row_ptr[r+1]-1: values data[k] in columns col_index[k].
struct Csr {
  int num_rows = 0, num_cols = 0;
  std::vector<int> row_ptr{0}, col_index;
  std::vector<float> data;
  int nnz() const { return static_cast<int>(data.size()); }
};

// Every row padded to the longest one and stored column-major: entry k of row r is at
// k * num_rows + r (so a warp of threads on consecutive rows reads consecutive words). Padding
// entries have value 0 and column 0.
struct Ell {
  int num_rows = 0, num_cols = 0, max_row_length = 0;
  std::vector<int> col_index;
  std::vector<float> data;
};
Ell to_ell(const Csr& csr);

// y = A x in double precision: the reference of the tests.
std::vector<double> multiply(const Csr& A, const std::vector<float>& x);

// A file that is not valid Matrix Market: the message is "file:line: what is wrong".
struct MatrixMarketError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

// Reads a "matrix coordinate" file (real, integer or pattern; general or symmetric) into CSR with
// the entries of each row sorted by column. Duplicate entries are added, as the format says.
Csr read_matrix_market(const std::string& path);
void write_matrix_market(const std::string& path, const Csr& A, const std::string& comment = "");

}  // namespace cudalab
