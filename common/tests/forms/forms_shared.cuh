// A header's file-scope __shared__ variable (headers.cu uses it).
#pragma once
__shared__ int header_total;
