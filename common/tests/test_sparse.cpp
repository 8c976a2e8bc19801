// The Matrix Market reader: valid files of each kind, and every malformed file named with its line.
#include <gtest/gtest.h>

#include <cstdio>
#include <fstream>
#include <string>

#include "cudalab/sparse.h"

namespace {

std::string file_with(const std::string& name, const std::string& text) {
  std::string path = ::testing::TempDir() + name;
  std::ofstream(path) << text;
  return path;
}

TEST(MatrixMarket, ReadsTheCoursesExample) {
  // The 4 x 4 example of the course, with its rows out of order and a comment.
  std::string path =
      file_with("book.mtx",
                "%%MatrixMarket matrix coordinate real general\n% the course's example\n"
                "4 4 7\n3 2 2\n1 1 3\n1 3 1\n3 3 4\n3 4 1\n4 1 1\n4 4 1\n");
  cudalab::Csr A = cudalab::read_matrix_market(path);
  EXPECT_EQ(A.row_ptr, (std::vector<int>{0, 2, 2, 5, 7}));
  EXPECT_EQ(A.col_index, (std::vector<int>{0, 2, 1, 2, 3, 0, 3}));
  EXPECT_EQ(A.data, (std::vector<float>{3, 1, 2, 4, 1, 1, 1}));
}

TEST(MatrixMarket, SymmetricPatternAndDuplicates) {
  std::string path = file_with(
      "sym.mtx", "%%MatrixMarket matrix coordinate pattern symmetric\n3 3 3\n2 1\n3 3\n2 1\n");
  cudalab::Csr A = cudalab::read_matrix_market(path);
  EXPECT_EQ(A.row_ptr, (std::vector<int>{0, 1, 2, 3}));
  EXPECT_EQ(A.data, (std::vector<float>{2, 2, 1}))
      << "(2,1) twice, mirrored to (1,2), duplicates added";
}

TEST(MatrixMarket, WritesWhatItReads) {
  cudalab::Csr A;
  A.num_rows = 2;
  A.num_cols = 3;
  A.row_ptr = {0, 2, 3};
  A.col_index = {0, 2, 1};
  A.data = {1.5f, -2, 4};
  std::string path = ::testing::TempDir() + "round.mtx";
  cudalab::write_matrix_market(path, A, "round trip");
  cudalab::Csr B = cudalab::read_matrix_market(path);
  EXPECT_EQ(B.row_ptr, A.row_ptr);
  EXPECT_EQ(B.col_index, A.col_index);
  EXPECT_EQ(B.data, A.data);
}

void expect_error(const std::string& text, const std::string& message) {
  std::string path = file_with("bad.mtx", text);
  try {
    cudalab::read_matrix_market(path);
    ADD_FAILURE() << "no error for:\n" << text;
  } catch (const cudalab::MatrixMarketError& e) {
    EXPECT_NE(std::string(e.what()).find(path + ":" + message), std::string::npos) << e.what();
  }
}

TEST(MatrixMarket, ErrorsNameTheFileAndLine) {
  expect_error("%%MatrixMarket matrix array real general\n2 2\n", "1: only 'matrix coordinate'");
  expect_error("hello\n", "1: the first line must start with %%MatrixMarket");
  expect_error("%%MatrixMarket matrix coordinate complex general\n", "1: the field must be");
  expect_error("%%MatrixMarket matrix coordinate real general\n%c\n2 2\n",
               "3: the size line must be");
  expect_error("%%MatrixMarket matrix coordinate real general\n2 2 1\n3 1 1.0\n",
               "3: index (3, 1) is outside");
  expect_error("%%MatrixMarket matrix coordinate real general\n2 2 1\n0 1 1.0\n",
               "3: index (0, 1) is outside");
  expect_error("%%MatrixMarket matrix coordinate real general\n2 2 2\n1 1 1.0\n",
               "3: the size line announced 2");
  expect_error("%%MatrixMarket matrix coordinate real general\n2 2 1\n1 1 1.0\n2 2 1.0\n",
               "4: more entries");
  expect_error("%%MatrixMarket matrix coordinate real general\n2 2 1\n1 1\n",
               "3: an entry must be: row column value");
  expect_error("%%MatrixMarket matrix coordinate real general\n", "1: the size line");
}

TEST(MatrixMarket, MissingFile) {
  EXPECT_THROW(cudalab::read_matrix_market("/nonexistent/x.mtx"), cudalab::MatrixMarketError);
}

TEST(Ell, PadsRowsColumnMajor) {
  cudalab::Csr A;
  A.num_rows = 3;
  A.num_cols = 3;
  A.row_ptr = {0, 2, 2, 3};
  A.col_index = {0, 2, 1};
  A.data = {1, 2, 3};
  cudalab::Ell E = cudalab::to_ell(A);
  EXPECT_EQ(E.max_row_length, 2);
  EXPECT_EQ(E.data, (std::vector<float>{1, 0, 3, 2, 0, 0}));
  EXPECT_EQ(E.col_index, (std::vector<int>{0, 0, 1, 2, 0, 0}));
}

}  // namespace
