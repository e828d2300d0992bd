/* minimlc's C runtime for models built into shared libraries: reads the weights file, fills the precomputed
 * buffers with the model's init entry, owns the thread pool, and calls the entry (`main_packed`); for a model with
 * run-time dimensions, it first checks the calls' shapes and fills the extents array (`minimlc_instance_shapes`). See
 * `minimlc.driver.shared_library` for the weights file's layout. */
#include "minimlc_runtime.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* The thread pool (LLVM IR from runtime/threadpool_ir.py, compiled into the library beside the model), and the
 * allocation guard built into it (runtime/alloc_guard_ir.py): the entries run through minimlc_guarded_call, which
 * returns the bytes an allocation of the call could not get (0: none failed) instead of letting the code run on. */
void *minimlc_pool_create(int32_t num_threads);
void minimlc_pool_destroy(void *pool);
int64_t minimlc_guarded_call(void (*entry)(void **), void **args);
void *minimlc_checked_alloc(size_t alignment, size_t size);

/* The library is linked with -Wl,--wrap=aligned_alloc: the model code's allocations (and this file's, which fail
 * as aligned_alloc does outside a guarded call) are checked. */
MINIMLC_HIDDEN void *__wrap_aligned_alloc(size_t alignment, size_t size) {
    return minimlc_checked_alloc(alignment, size);
}

#define ALIGNMENT 64
#define HEADER_BYTES 32
static const char MAGIC[8] = {'M', 'L', 'C', 'W', 'G', 'T', 0, 0};
enum { FORMAT_VERSION = 1 };

struct minimlc_instance {
    const minimlc_desc *desc;
    void *pool;
    unsigned char *file;  /* the weights file, 64-byte aligned; weights point into it */
    void **precomputed;
    void **args;          /* the entry's arguments with the pool, weights and precomputed buffers filled in */
    int num_args;
};

static __thread char last_error[512];

static void set_error(const char *format, ...) {
    va_list list;
    va_start(list, format);
    vsnprintf(last_error, sizeof last_error, format, list);
    va_end(list);
}

const char *minimlc_last_error(void) { return last_error; }

void minimlc_set_error(const char *message) { set_error("%s", message); }

static uint64_t read_u64(const unsigned char *p) {
    uint64_t value;
    memcpy(&value, p, sizeof value);
    return value;
}

static uint32_t read_u32(const unsigned char *p) {
    uint32_t value;
    memcpy(&value, p, sizeof value);
    return value;
}

static size_t round_up(size_t bytes) { return (bytes + ALIGNMENT - 1) / ALIGNMENT * ALIGNMENT; }

/* Whether a guarded call of `desc`'s `function` (load: its init entry; run: its entry) failed to allocate `failed`
 * bytes (0: it did not); if so, the error names them. */
static int out_of_memory(const minimlc_desc *desc, const char *function, int64_t failed) {
    if (failed)
        set_error("%s_%s: out of memory: the model's native code could not allocate %lld bytes (%.1f GiB) for its "
                  "intermediate buffers", desc->name, function, (long long)failed, (double)failed / (1 << 30));
    return failed != 0;
}

/* Read `path` whole into a 64-byte aligned buffer; NULL (error set) on failure. */
static unsigned char *read_weights(const minimlc_desc *desc, const char *path, size_t *size) {
    FILE *file = fopen(path, "rb");
    if (!file) {
        set_error("%s: cannot open weights file '%s'", desc->name, path);
        return NULL;
    }
    long end = fseek(file, 0, SEEK_END) == 0 ? ftell(file) : -1;
    unsigned char *buffer = end >= 0 ? aligned_alloc(ALIGNMENT, round_up((size_t)end + 1)) : NULL;
    if (!buffer || fseek(file, 0, SEEK_SET) != 0 || fread(buffer, 1, (size_t)end, file) != (size_t)end) {
        set_error("%s: cannot read weights file '%s'", desc->name, path);
        free(buffer);
        fclose(file);
        return NULL;
    }
    fclose(file);
    *size = (size_t)end;
    return buffer;
}

/* Check the weights file against `desc` and point `weights` into it; 0 on success. */
static int check_weights(const minimlc_desc *desc, const char *path, const unsigned char *file, size_t size,
                         void **weights) {
    if (size < HEADER_BYTES || memcmp(file, MAGIC, sizeof MAGIC) != 0) {
        set_error("%s: '%s' is not a minimlc weights file", desc->name, path);
        return 1;
    }
    uint32_t version = read_u32(file + 8), count = read_u32(file + 12);
    if (version != FORMAT_VERSION || read_u64(file + 16) != desc->fingerprint || (int)count != desc->num_weights) {
        set_error("%s: '%s' holds the weights of another model (or another format): build them together",
                  desc->name, path);
        return 1;
    }
    if (read_u64(file + 24) != size || size < HEADER_BYTES + 16 * (size_t)count) {
        set_error("%s: '%s' is truncated", desc->name, path);
        return 1;
    }
    for (uint32_t i = 0; i < count; ++i) {
        uint64_t offset = read_u64(file + HEADER_BYTES + 16 * i), bytes = read_u64(file + HEADER_BYTES + 16 * i + 8);
        if (bytes != desc->weight_bytes[i] || offset % ALIGNMENT != 0 || offset > size || bytes > size - offset) {
            set_error("%s: '%s' is corrupt: weight %u has %llu bytes at offset %llu", desc->name, path, i,
                      (unsigned long long)bytes, (unsigned long long)offset);
            return 1;
        }
        weights[i] = (void *)(file + offset);
    }
    return 0;
}

minimlc_instance *minimlc_instance_load(const minimlc_desc *desc, const char *weights_path, int num_threads) {
    const char *missing = desc->missing_cpu_feature();
    if (missing) {
        set_error("%s: this CPU lacks %s, which the code built for target '%s' uses: build the library for this "
                  "CPU (minimlc build --target)", desc->name, missing, desc->target);
        return NULL;
    }
    minimlc_instance *instance = calloc(1, sizeof *instance);
    if (!instance) {
        set_error("%s: out of memory", desc->name);
        return NULL;
    }
    instance->desc = desc;
    int io = desc->num_inputs + desc->num_outputs + (desc->extents != NULL), has_pool = desc->pool_slot >= 0;
    int tail = desc->num_weights + desc->num_precomputed;
    instance->num_args = io + has_pool + tail;
    instance->args = calloc((size_t)instance->num_args + 1, sizeof(void *));
    instance->precomputed = calloc((size_t)desc->num_precomputed + 1, sizeof(void *));
    size_t size = 0;
    if (!instance->args || !instance->precomputed) {
        set_error("%s: out of memory", desc->name);
        goto fail;
    }
    if (!weights_path) {
        set_error("%s: no weights file given", desc->name);
        goto fail;
    }
    instance->file = read_weights(desc, weights_path, &size);
    void **weights = instance->args + io + has_pool;
    if (!instance->file || check_weights(desc, weights_path, instance->file, size, weights) != 0)
        goto fail;
    for (int i = 0; i < desc->num_precomputed; ++i) {
        instance->precomputed[i] = aligned_alloc(ALIGNMENT, round_up(desc->precomputed_bytes[i]));
        if (!instance->precomputed[i]) {
            set_error("%s: out of memory for precomputed buffer %d", desc->name, i);
            goto fail;
        }
        weights[desc->num_weights + i] = instance->precomputed[i];
    }
    if (desc->init && desc->num_precomputed > 0 &&
        out_of_memory(desc, "load", minimlc_guarded_call(desc->init, weights)))
        goto fail;
    if (has_pool) {
        long cores = sysconf(_SC_NPROCESSORS_ONLN);
        int threads = num_threads > 0 ? num_threads : (cores > 0 ? (int)cores : 1);
        instance->pool = minimlc_pool_create(threads);
        if (!instance->pool) {
            set_error("%s: cannot start a thread pool of %d threads", desc->name, threads);
            goto fail;
        }
        instance->args[desc->pool_slot] = instance->pool;
    }
    return instance;
fail:
    minimlc_instance_free(instance);
    return NULL;
}

int minimlc_instance_run(const minimlc_desc *desc, minimlc_instance *instance, const void *const *inputs,
                         void *const *outputs) {
    return minimlc_instance_run_extents(desc, instance, NULL, inputs, outputs);
}

int minimlc_instance_run_extents(const minimlc_desc *desc, minimlc_instance *instance, const int64_t *extents,
                                 const void *const *inputs, void *const *outputs) {
    if (!instance) {
        set_error("%s_run: the model is NULL (did its load fail?)", desc->name);
        return 1;
    }
    void *args[instance->num_args + 1];
    memcpy(args, instance->args, (size_t)instance->num_args * sizeof(void *));
    for (int i = 0; i < desc->num_inputs; ++i) {
        if (!inputs[i]) {
            set_error("%s_run: input %d is NULL", desc->name, i);
            return 1;
        }
        args[i] = (void *)inputs[i];
    }
    for (int i = 0; i < desc->num_outputs; ++i) {
        if (!outputs[i]) {
            set_error("%s_run: output %d is NULL", desc->name, i);
            return 1;
        }
        args[desc->num_inputs + i] = outputs[i];
    }
    if (desc->extents)
        args[desc->num_inputs + desc->num_outputs] = (void *)extents;
    return out_of_memory(desc, "run", minimlc_guarded_call(desc->entry, args)) ? 3 : 0;
}

/* The shape checks of a model with run-time dimensions, in the words of the Python runtime's (runtime/extents.py). */

/* `dims` as Python writes a shape tuple: (), (3,), (2, 5); the first 16 sizes at most. */
static const char *shape_text(char *text, size_t size, int ndim, const int64_t *dims) {
    size_t used = (size_t)snprintf(text, size, "(");
    for (int i = 0; i < ndim && i < 16 && used < size; ++i)
        used += (size_t)snprintf(text + used, size - used, "%s%lld", i ? ", " : "", (long long)dims[i]);
    if (used < size)
        snprintf(text + used, size - used, ndim > 16 ? ", ...)" : ndim == 1 ? ",)" : ")");
    return text;
}

/* Whether a tensor of `ndim` sizes `dims` has more bytes than a pointer difference can count. */
static int too_large(int ndim, const int64_t *dims, int64_t itemsize) {
    int64_t bytes = itemsize;
    for (int i = 0; i < ndim; ++i)
        if (dims[i] == 0)
            return 0;
    for (int i = 0; i < ndim; ++i)
        if (__builtin_mul_overflow(bytes, dims[i], &bytes) || bytes > PTRDIFF_MAX)
            return 1;
    return 0;
}

/* Check `shapes` against the inputs' declared shapes and bounds and fill `extents`; 0, else 1 or 4 (error set). */
static int check_inputs(const minimlc_desc *desc, const char *function, const minimlc_shape *shapes,
                        int64_t *extents) {
    const minimlc_extents *x = desc->extents;
    int64_t size_of[x->num_symbols + 1];
    int input_of[x->num_symbols + 1], axis_of[x->num_symbols + 1], k = 0;
    for (int s = 0; s < x->num_symbols; ++s)
        input_of[s] = -1;
    char text[200];
    for (int i = 0; i < desc->num_inputs; ++i) {
        const minimlc_tensor *input = &x->inputs[i];
        const minimlc_shape *given = &shapes[i];
        if (given->ndim > 0 && !given->dims) {
            set_error("%s_%s: input '%s': its shape's dims are NULL", desc->name, function, input->name);
            return 1;
        }
        if (given->ndim != input->ndim) {
            const char *got = given->ndim < 0 ? "a negative rank" : shape_text(text, sizeof text, given->ndim,
                                                                              given->dims);
            set_error("%s_%s: input '%s': expected rank %d %s, got shape %s", desc->name, function, input->name,
                      input->ndim, input->declared, got);
            return 4;
        }
        for (int axis = 0; axis < input->ndim; ++axis) {
            int64_t declared = input->dims[axis], size = given->dims[axis];
            if (declared >= 0) {
                if (size != declared) {
                    set_error("%s_%s: input '%s' axis %d: expected size %lld %s, got %lld", desc->name, function,
                              input->name, axis, (long long)declared, input->declared, (long long)size);
                    return 4;
                }
                continue;
            }
            int s = (int)(-1 - declared);
            const char *symbol = x->symbols[s];
            if (size < 0) {
                set_error("%s_%s: input '%s' axis %d is dimension '%s' = %lld: a size cannot be negative", desc->name,
                          function, input->name, axis, symbol, (long long)size);
                return 4;
            }
            if (input_of[s] < 0) {
                size_of[s] = size;
                input_of[s] = i;
                axis_of[s] = axis;
            } else if (size_of[s] != size) {
                set_error("%s_%s: input '%s' axis %d is dimension '%s' = %lld, but input '%s' axis %d gave it %lld: "
                          "inputs that share a dimension must agree", desc->name, function, input->name, axis,
                          symbol, (long long)size, x->inputs[input_of[s]].name, axis_of[s], (long long)size_of[s]);
                return 4;
            }
            if (size < x->lo[s] || size > x->hi[s]) {
                set_error("%s_%s: input '%s' axis %d is dimension '%s' = %lld, outside its bounds [%lld, %lld] "
                          "(input_bounds)", desc->name, function, input->name, axis, symbol, (long long)size,
                          (long long)x->lo[s], (long long)x->hi[s]);
                return 4;
            }
            extents[k++] = size;
        }
        if (too_large(input->ndim, given->dims, input->itemsize)) {
            set_error("%s_%s: input '%s': shape %s is too large: its byte size overflows 64 bits", desc->name,
                      function, input->name, shape_text(text, sizeof text, given->ndim, given->dims));
            return 4;
        }
    }
    for (int d = 0; d < x->num_derived; ++d) {
        const minimlc_derived *derived = &x->derived[d];
        int s = derived->symbol, overflow = 0;
        int64_t expected = 0;
        for (int t = 0; t < derived->num_terms; ++t) {
            int64_t term = derived->terms[t].coefficient;
            for (int f = 0; f < derived->terms[t].num_factors; ++f)
                overflow |= __builtin_mul_overflow(term, size_of[derived->terms[t].factors[f]], &term);
            overflow |= __builtin_add_overflow(expected, term, &expected);
        }
        if (overflow) {
            set_error("%s_%s: input '%s' axis %d is dimension '%s', whose value overflows 64 bits for these inputs",
                      desc->name, function, x->inputs[input_of[s]].name, axis_of[s], x->symbols[s]);
            return 4;
        }
        if (expected != size_of[s]) {
            set_error("%s_%s: input '%s' axis %d is dimension '%s' = %lld, but the feed has size %lld", desc->name,
                      function, x->inputs[input_of[s]].name, axis_of[s], x->symbols[s], (long long)expected,
                      (long long)size_of[s]);
            return 4;
        }
    }
    return 0;
}

int minimlc_instance_shapes(const minimlc_desc *desc, minimlc_instance *instance, const char *function,
                            const minimlc_shape *input_shapes, const minimlc_shape *output_shapes, int write,
                            int64_t *extents) {
    const minimlc_extents *x = desc->extents;
    if (!instance) {
        set_error("%s_%s: the model is NULL (did its load fail?)", desc->name, function);
        return 1;
    }
    if (!input_shapes || !output_shapes) {
        set_error("%s_%s: %s is NULL", desc->name, function, input_shapes ? "output_shapes" : "input_shapes");
        return 1;
    }
    int status = check_inputs(desc, function, input_shapes, extents);
    if (status)
        return status;
    int64_t computed[x->num_output_extents + 1];
    if (x->num_output_extents > 0) {
        for (int j = 0; j < x->num_output_extents; ++j)
            computed[j] = -1;
        void *args[] = {extents, computed};
        if (out_of_memory(desc, function, minimlc_guarded_call(x->output_extents, args)))
            return 3;
    }
    char text[200], other[200];
    for (int o = 0, j = 0; o < x->num_outputs; ++o) {
        const minimlc_tensor *output = &x->outputs[o];
        const minimlc_shape *given = &output_shapes[o];
        int64_t shape[output->ndim + 1];
        for (int axis = 0; axis < output->ndim; ++axis)
            shape[axis] = output->dims[axis] >= 0 ? output->dims[axis] : computed[j++];
        for (int axis = 0; axis < output->ndim; ++axis) {
            if (shape[axis] < 0) {
                set_error("%s_%s: these input shapes give output '%s' a negative size %lld at axis %d: the model "
                          "does not take them", desc->name, function, output->name, (long long)shape[axis], axis);
                return 4;
            }
        }
        if (too_large(output->ndim, shape, output->itemsize)) {
            set_error("%s_%s: output '%s': shape %s is too large: its byte size overflows 64 bits", desc->name,
                      function, output->name, shape_text(text, sizeof text, output->ndim, shape));
            return 4;
        }
        if (given->ndim > 0 && !given->dims) {
            set_error("%s_%s: output '%s': its shape's dims are NULL", desc->name, function, output->name);
            return 1;
        }
        if (write && given->ndim != output->ndim) {
            set_error("%s_%s: output '%s': its shape has rank %d, the output's is %d %s", desc->name, function,
                      output->name, given->ndim, output->ndim, output->declared);
            return 4;
        }
        if (!write && (given->ndim != output->ndim ||
                       memcmp(given->dims, shape, (size_t)output->ndim * sizeof(int64_t)) != 0)) {
            const char *got = given->ndim < 0 ? "a negative rank" : shape_text(other, sizeof other, given->ndim,
                                                                              given->dims);
            set_error("%s_%s: output '%s': expected shape %s for these inputs (as %s_output_shapes gives), got "
                      "shape %s",
                      desc->name, function, output->name, shape_text(text, sizeof text, output->ndim, shape),
                      desc->name, got);
            return 4;
        }
    }
    if (write)
        for (int o = 0, j = 0; o < x->num_outputs; ++o)
            for (int axis = 0; axis < x->outputs[o].ndim; ++axis)
                output_shapes[o].dims[axis] = x->outputs[o].dims[axis] >= 0 ? x->outputs[o].dims[axis]
                                                                             : computed[j++];
    return 0;
}

void minimlc_instance_free(minimlc_instance *instance) {
    if (!instance)
        return;
    if (instance->pool)
        minimlc_pool_destroy(instance->pool);
    if (instance->precomputed)
        for (int i = 0; i < instance->desc->num_precomputed; ++i)
            free(instance->precomputed[i]);
    free(instance->precomputed);
    free(instance->args);
    free(instance->file);
    free(instance);
}
