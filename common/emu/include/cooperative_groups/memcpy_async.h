// <cooperative_groups/memcpy_async.h> on the emu backend: a group's members each make their share
// of the copy at once, and cg::wait(group) is group.sync(). cudalab/emu/async_copy.h states the
// algorithm and its limitations.
#pragma once

#include <cstddef>

#include "cudalab/emu/async_copy.h"
#include "cudalab/emu/cooperative_groups.h"

namespace cooperative_groups {
template <class Group, class Size>
void memcpy_async(const Group& group, void* dst, const void* src, Size size) {
  cudalab::emu::copy_share(dst, src, size, group.thread_rank(), group.size());
}
// The form that counts elements: at most dst_count of the src_count elements.
template <class Group, class T>
void memcpy_async(const Group& group, T* dst, std::size_t dst_count, const T* src,
                  std::size_t src_count) {
  const std::size_t count = dst_count < src_count ? dst_count : src_count;
  cudalab::emu::copy_share(dst, src, count * sizeof(T), group.thread_rank(), group.size());
}
template <class Group>
void wait(const Group& group) {
  group.sync();
}
template <unsigned Prior, class Group>
void wait_prior(const Group& group) {
  group.sync();
}
}  // namespace cooperative_groups
