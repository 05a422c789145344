// How oneDNN products cut their rows into calls (model/product_rows.h).
#include <gtest/gtest.h>

#include <numeric>
#include <set>

#include "model/product_rows.h"

using namespace yoke;

TEST(ProductRows, SmallCallsAreOneCallOfTheirRows) {
  EXPECT_TRUE(product_row_chunks(0).empty());
  EXPECT_EQ(product_row_chunks(1), (std::vector<int64_t>{1}));
  EXPECT_EQ(product_row_chunks(128), (std::vector<int64_t>{128}));
}

TEST(ProductRows, LargeCallsAreWholePiecesAndARestOfAtLeastHalf) {
  EXPECT_EQ(product_row_chunks(256), (std::vector<int64_t>{128, 128}));
  EXPECT_EQ(product_row_chunks(200), (std::vector<int64_t>{128, 72}));
  // A rest under 64 joins the last whole piece, and the two split in near halves.
  EXPECT_EQ(product_row_chunks(130), (std::vector<int64_t>{65, 65}));
  EXPECT_EQ(product_row_chunks(300), (std::vector<int64_t>{128, 86, 86}));
  EXPECT_EQ(product_row_chunks(131), (std::vector<int64_t>{66, 65}));
}

// Every row count up to 3000: the pieces cover the rows, none is over `most`, none under most/2
// once rows > most, and all the pieces together take at most `most` distinct sizes (one
// primitive each per weight shape).
TEST(ProductRows, PiecesCoverTheRowsWithBoundedSizes) {
  for (int64_t most : {2, 7, 128}) {
    std::set<int64_t> sizes;
    for (int64_t rows = 0; rows <= 3000; ++rows) {
      const auto chunks = product_row_chunks(rows, most);
      EXPECT_EQ(std::accumulate(chunks.begin(), chunks.end(), int64_t(0)), rows) << rows;
      for (int64_t c : chunks) {
        EXPECT_LE(c, most) << rows;
        EXPECT_GE(c, rows > most ? most / 2 : 1) << rows;
        sizes.insert(c);
      }
    }
    EXPECT_LE(int64_t(sizes.size()), most);
  }
}

TEST(ProductRows, RejectsWhatCannotBeCut) {
  EXPECT_THROW(product_row_chunks(-1), std::invalid_argument);
  EXPECT_THROW(product_row_chunks(10, 1), std::invalid_argument);
}
