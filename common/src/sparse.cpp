// CSR, ELL and Matrix Market files (see sparse.h).
#include "cudalab/sparse.h"

#include <algorithm>
#include <fstream>
#include <sstream>
#include <tuple>

namespace cudalab {

Ell to_ell(const Csr& csr) {
  Ell ell;
  ell.num_rows = csr.num_rows;
  ell.num_cols = csr.num_cols;
  for (int r = 0; r < csr.num_rows; ++r)
    ell.max_row_length = std::max(ell.max_row_length, csr.row_ptr[r + 1] - csr.row_ptr[r]);
  const size_t slots = size_t(ell.max_row_length) * csr.num_rows;
  ell.col_index.assign(slots, 0);
  ell.data.assign(slots, 0.0f);
  for (int r = 0; r < csr.num_rows; ++r)
    for (int k = 0; k < csr.row_ptr[r + 1] - csr.row_ptr[r]; ++k) {
      ell.col_index[size_t(k) * csr.num_rows + r] = csr.col_index[csr.row_ptr[r] + k];
      ell.data[size_t(k) * csr.num_rows + r] = csr.data[csr.row_ptr[r] + k];
    }
  return ell;
}

std::vector<double> multiply(const Csr& A, const std::vector<float>& x) {
  std::vector<double> y(A.num_rows, 0.0);
  for (int r = 0; r < A.num_rows; ++r)
    for (int k = A.row_ptr[r]; k < A.row_ptr[r + 1]; ++k)
      y[r] += double(A.data[k]) * x[A.col_index[k]];
  return y;
}

namespace {

[[noreturn]] void fail(const std::string& path, int line, const std::string& what) {
  throw MatrixMarketError(path + ":" + std::to_string(line) + ": " + what);
}

std::string lower(std::string s) {
  for (char& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return s;
}

}  // namespace

Csr read_matrix_market(const std::string& path) {
  std::ifstream in(path);
  if (!in) throw MatrixMarketError(path + ": cannot open the file");
  std::string text;
  int line = 1;
  if (!std::getline(in, text)) fail(path, line, "the file is empty");
  std::istringstream header(lower(text));
  std::string banner, object, format, field, symmetry;
  header >> banner >> object >> format >> field >> symmetry;
  if (banner != "%%matrixmarket")
    fail(path, line,
         "the first line must start with %%MatrixMarket, not '" + text.substr(0, 40) + "'");
  if (object != "matrix" || format != "coordinate")
    fail(path, line,
         "only 'matrix coordinate' (sparse) files are supported, not '" + object + " " + format +
             "'");
  if (field != "real" && field != "integer" && field != "pattern")
    fail(path, line, "the field must be real, integer or pattern, not '" + field + "'");
  if (symmetry != "general" && symmetry != "symmetric")
    fail(path, line, "the symmetry must be general or symmetric, not '" + symmetry + "'");

  long rows = -1, cols = -1, entries = -1;
  while (std::getline(in, text)) {
    ++line;
    if (text.empty() || text[0] == '%') continue;
    std::istringstream size(text);
    std::string extra;
    if (!(size >> rows >> cols >> entries) || (size >> extra) || rows < 0 || cols < 0 ||
        entries < 0)
      fail(path, line, "the size line must be three numbers: rows columns entries");
    break;
  }
  if (entries < 0) fail(path, line, "the size line (rows columns entries) is missing");
  if (rows > 1'000'000'000 || cols > 1'000'000'000 || entries > 2'000'000'000)
    fail(path, line, "the matrix is too large for 32-bit indices");

  std::vector<std::tuple<int, int, float>> triples;
  long seen = 0;
  while (std::getline(in, text)) {
    ++line;
    if (text.empty() || text[0] == '%' || text.find_first_not_of(" \t\r") == std::string::npos)
      continue;
    if (++seen > entries)
      fail(path, line,
           "more entries than the " + std::to_string(entries) + " the size line announced");
    std::istringstream entry(text);
    long r, c;
    double v = 1.0;
    std::string extra;
    if (!(entry >> r >> c) || (field != "pattern" && !(entry >> v)) || (entry >> extra))
      fail(path, line,
           field == "pattern" ? "an entry must be: row column"
                              : "an entry must be: row column value");
    if (r < 1 || r > rows || c < 1 || c > cols)
      fail(path, line,
           "index (" + std::to_string(r) + ", " + std::to_string(c) + ") is outside the " +
               std::to_string(rows) + " x " + std::to_string(cols) +
               " matrix (indices start at 1)");
    triples.emplace_back(int(r - 1), int(c - 1), float(v));
    if (symmetry == "symmetric" && r != c) triples.emplace_back(int(c - 1), int(r - 1), float(v));
  }
  if (seen != entries)
    fail(path, line,
         "the size line announced " + std::to_string(entries) + " entries, the file has " +
             std::to_string(seen));

  std::sort(triples.begin(), triples.end(), [](const auto& a, const auto& b) {
    return std::tie(std::get<0>(a), std::get<1>(a)) < std::tie(std::get<0>(b), std::get<1>(b));
  });
  Csr A;
  A.num_rows = int(rows);
  A.num_cols = int(cols);
  A.row_ptr.assign(rows + 1, 0);
  for (size_t i = 0; i < triples.size(); ++i) {
    auto [r, c, v] = triples[i];
    if (i > 0 && std::get<0>(triples[i - 1]) == r && std::get<1>(triples[i - 1]) == c) {
      A.data.back() += v;  // a duplicate: added
      continue;
    }
    A.col_index.push_back(c);
    A.data.push_back(v);
    ++A.row_ptr[r + 1];
  }
  for (long r = 0; r < rows; ++r) A.row_ptr[r + 1] += A.row_ptr[r];
  return A;
}

void write_matrix_market(const std::string& path, const Csr& A, const std::string& comment) {
  std::ofstream out(path);
  if (!out) throw MatrixMarketError(path + ": cannot write the file");
  out << "%%MatrixMarket matrix coordinate real general\n";
  if (!comment.empty()) out << "% " << comment << "\n";
  out << A.num_rows << " " << A.num_cols << " " << A.nnz() << "\n";
  for (int r = 0; r < A.num_rows; ++r)
    for (int k = A.row_ptr[r]; k < A.row_ptr[r + 1]; ++k)
      out << r + 1 << " " << A.col_index[k] + 1 << " " << A.data[k] << "\n";
}

}  // namespace cudalab
