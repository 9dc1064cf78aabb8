// tessel: the whole public API.
#pragma once

#include "tessel/binary_format.h"
#include "tessel/coo.h"
#include "tessel/error.h"
#include "tessel/format.h"
#include "tessel/generate.h"
#include "tessel/io.h"
#include "tessel/jit.h"
#include "tessel/kernel.h"
#include "tessel/notation.h"
#include "tessel/operators.h"
#include "tessel/parser.h"
#include "tessel/plot.h"
#include "tessel/reference.h"
#include "tessel/schedule.h"
#include "tessel/tensor.h"
