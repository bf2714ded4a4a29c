/* constant_filter: a separable convolution whose filter lives in
 * __constant__ memory, ported from CUDA's convolutionSeparable sample.
 *
 * The sample's device code is kept as it is (C++ kernels, the filter in a
 * __constant__ array, shared-memory tiles with halos); what the CUDA
 * runtime did, ptxkit does through its public API: one program is compiled
 * once into one module for both kernels and the filter
 * (ptxkit_program_module_get), the filter is set where the sample called
 * cudaMemcpyToSymbol (ptxkit_module_variable_write, by the C++ name
 * expression "&c_Kernel"), and the kernels are taken out of the module by
 * their C++ names: no driver call, no mangled name written by hand.
 *
 * A random image is filtered by rows, then by columns, with a random
 * filter, then with a second one written on a stream, and checked against
 * a float64 CPU reference (relative L2 error below 1e-6, as the sample
 * checks). Exit status: 0 right, 1 wrong or an error, 77 no GPU (or no
 * NVRTC to compile with). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include <ptxkit.h>

static const char convolution_source[] =
    "#define KERNEL_RADIUS 8\n"
    "#define KERNEL_LENGTH (2 * KERNEL_RADIUS + 1)\n"
    "__constant__ float c_Kernel[KERNEL_LENGTH];\n"
    "\n"
    "#define ROWS_BLOCKDIM_X 16\n"
    "#define ROWS_BLOCKDIM_Y 4\n"
    "#define ROWS_RESULT_STEPS 8\n"
    "#define ROWS_HALO_STEPS 1\n"
    "__global__ void convolutionRowsKernel(float *d_Dst, const float *d_Src, int imageW, int imageH, int pitch) {\n"
    "    __shared__ float s_Data[ROWS_BLOCKDIM_Y][(ROWS_RESULT_STEPS + 2 * ROWS_HALO_STEPS) * ROWS_BLOCKDIM_X];\n"
    "    const int baseX = (blockIdx.x * ROWS_RESULT_STEPS - ROWS_HALO_STEPS) * ROWS_BLOCKDIM_X + threadIdx.x;\n"
    "    const int baseY = blockIdx.y * ROWS_BLOCKDIM_Y + threadIdx.y;\n"
    "    d_Src += baseY * pitch + baseX;\n"
    "    d_Dst += baseY * pitch + baseX;\n"
    "#pragma unroll\n"
    "    for (int i = ROWS_HALO_STEPS; i < ROWS_HALO_STEPS + ROWS_RESULT_STEPS; i++)\n"
    "        s_Data[threadIdx.y][threadIdx.x + i * ROWS_BLOCKDIM_X] = d_Src[i * ROWS_BLOCKDIM_X];\n"
    "#pragma unroll\n"
    "    for (int i = 0; i < ROWS_HALO_STEPS; i++)\n"
    "        s_Data[threadIdx.y][threadIdx.x + i * ROWS_BLOCKDIM_X] =\n"
    "            (baseX >= -i * ROWS_BLOCKDIM_X) ? d_Src[i * ROWS_BLOCKDIM_X] : 0;\n"
    "#pragma unroll\n"
    "    for (int i = ROWS_HALO_STEPS + ROWS_RESULT_STEPS; i < ROWS_HALO_STEPS + ROWS_RESULT_STEPS + ROWS_HALO_STEPS; i++)\n"
    "        s_Data[threadIdx.y][threadIdx.x + i * ROWS_BLOCKDIM_X] =\n"
    "            (imageW - baseX > i * ROWS_BLOCKDIM_X) ? d_Src[i * ROWS_BLOCKDIM_X] : 0;\n"
    "    __syncthreads();\n"
    "#pragma unroll\n"
    "    for (int i = ROWS_HALO_STEPS; i < ROWS_HALO_STEPS + ROWS_RESULT_STEPS; i++) {\n"
    "        float sum = 0;\n"
    "#pragma unroll\n"
    "        for (int j = -KERNEL_RADIUS; j <= KERNEL_RADIUS; j++)\n"
    "            sum += c_Kernel[KERNEL_RADIUS - j] * s_Data[threadIdx.y][threadIdx.x + i * ROWS_BLOCKDIM_X + j];\n"
    "        d_Dst[i * ROWS_BLOCKDIM_X] = sum;\n"
    "    }\n"
    "}\n"
    "\n"
    "#define COLUMNS_BLOCKDIM_X 16\n"
    "#define COLUMNS_BLOCKDIM_Y 8\n"
    "#define COLUMNS_RESULT_STEPS 8\n"
    "#define COLUMNS_HALO_STEPS 1\n"
    "__global__ void convolutionColumnsKernel(float *d_Dst, const float *d_Src, int imageW, int imageH, int pitch) {\n"
    "    __shared__ float s_Data[COLUMNS_BLOCKDIM_X][(COLUMNS_RESULT_STEPS + 2 * COLUMNS_HALO_STEPS) * COLUMNS_BLOCKDIM_Y + 1];\n"
    "    const int baseX = blockIdx.x * COLUMNS_BLOCKDIM_X + threadIdx.x;\n"
    "    const int baseY = (blockIdx.y * COLUMNS_RESULT_STEPS - COLUMNS_HALO_STEPS) * COLUMNS_BLOCKDIM_Y + threadIdx.y;\n"
    "    d_Src += baseY * pitch + baseX;\n"
    "    d_Dst += baseY * pitch + baseX;\n"
    "#pragma unroll\n"
    "    for (int i = COLUMNS_HALO_STEPS; i < COLUMNS_HALO_STEPS + COLUMNS_RESULT_STEPS; i++)\n"
    "        s_Data[threadIdx.x][threadIdx.y + i * COLUMNS_BLOCKDIM_Y] = d_Src[i * COLUMNS_BLOCKDIM_Y * pitch];\n"
    "#pragma unroll\n"
    "    for (int i = 0; i < COLUMNS_HALO_STEPS; i++)\n"
    "        s_Data[threadIdx.x][threadIdx.y + i * COLUMNS_BLOCKDIM_Y] =\n"
    "            (baseY >= -i * COLUMNS_BLOCKDIM_Y) ? d_Src[i * COLUMNS_BLOCKDIM_Y * pitch] : 0;\n"
    "#pragma unroll\n"
    "    for (int i = COLUMNS_HALO_STEPS + COLUMNS_RESULT_STEPS;\n"
    "         i < COLUMNS_HALO_STEPS + COLUMNS_RESULT_STEPS + COLUMNS_HALO_STEPS; i++)\n"
    "        s_Data[threadIdx.x][threadIdx.y + i * COLUMNS_BLOCKDIM_Y] =\n"
    "            (imageH - baseY > i * COLUMNS_BLOCKDIM_Y) ? d_Src[i * COLUMNS_BLOCKDIM_Y * pitch] : 0;\n"
    "    __syncthreads();\n"
    "#pragma unroll\n"
    "    for (int i = COLUMNS_HALO_STEPS; i < COLUMNS_HALO_STEPS + COLUMNS_RESULT_STEPS; i++) {\n"
    "        float sum = 0;\n"
    "#pragma unroll\n"
    "        for (int j = -KERNEL_RADIUS; j <= KERNEL_RADIUS; j++)\n"
    "            sum += c_Kernel[KERNEL_RADIUS - j] * s_Data[threadIdx.x][threadIdx.y + i * COLUMNS_BLOCKDIM_Y + j];\n"
    "        d_Dst[i * COLUMNS_BLOCKDIM_Y * pitch] = sum;\n"
    "    }\n"
    "}\n";

/* The sample's geometry: the rows kernel covers 16 x 8 = 128 columns and 4
 * rows a block, the columns kernel 16 columns and 8 x 8 = 64 rows. The
 * image must be a multiple of both, as in the sample. */
#define KERNEL_RADIUS 8
#define KERNEL_LENGTH (2 * KERNEL_RADIUS + 1)
#define ROWS_X (16 * 8)
#define ROWS_Y 4
#define COLUMNS_X 16
#define COLUMNS_Y (8 * 8)

static int failed(const char *what, ptxkit_status st) {
    fprintf(stderr, "constant_filter: %s: %s: %s\n", what, ptxkit_status_string(st), ptxkit_last_error());
    return 1;
}

static unsigned long long rng = 0x9e3779b97f4a7c15ull;
static float random_unit(void) {
    rng = rng * 6364136223846793005ull + 1442695040888963407ull;
    return (float)((rng >> 40) & 0xffff) / 65535.0f;
}

/* The sample's CPU filters, in float64. */
static void rows_cpu(double *dst, const float *src, const float *kernel, int w, int h) {
    for (int y = 0; y < h; y++)
        for (int x = 0; x < w; x++) {
            double sum = 0;
            for (int k = -KERNEL_RADIUS; k <= KERNEL_RADIUS; k++)
                if (x + k >= 0 && x + k < w) sum += (double)src[y * w + x + k] * kernel[KERNEL_RADIUS - k];
            dst[y * w + x] = sum;
        }
}

static void columns_cpu(double *dst, const double *src, const float *kernel, int w, int h) {
    for (int y = 0; y < h; y++)
        for (int x = 0; x < w; x++) {
            double sum = 0;
            for (int k = -KERNEL_RADIUS; k <= KERNEL_RADIUS; k++)
                if (y + k >= 0 && y + k < h) sum += src[(y + k) * w + x] * kernel[KERNEL_RADIUS - k];
            dst[y * w + x] = sum;
        }
}

/* Relative L2 error of got against the float64 reference of src and kernel. */
static double filter_error(const float *got, const float *src, const float *kernel, int w, int h) {
    size_t n = (size_t)w * h;
    double *rows = malloc(n * sizeof *rows), *want = malloc(n * sizeof *want);
    if (!rows || !want) {
        free(rows);
        free(want);
        return INFINITY;
    }
    rows_cpu(rows, src, kernel, w, h);
    columns_cpu(want, rows, kernel, w, h);
    double diff = 0, ref = 0;
    for (size_t i = 0; i < n; i++) {
        diff += (got[i] - want[i]) * (got[i] - want[i]);
        ref += want[i] * want[i];
    }
    free(rows);
    free(want);
    return sqrt(diff / ref);
}

int main(void) {
    ptxkit_context *ctx = NULL;
    if (ptxkit_context_create(0, &ctx) != PTXKIT_SUCCESS) {
        printf("skipped: no GPU (%s)\n", ptxkit_last_error());
        return 77;
    }
    const int w = 9 * ROWS_X, h = 5 * COLUMNS_Y; /* 1152 x 320 */
    const size_t n = (size_t)w * h, bytes = n * sizeof(float);
    float *image = malloc(bytes), *result = malloc(bytes), filter[KERNEL_LENGTH];
    ptxkit_program *program = NULL;
    ptxkit_module *module = NULL;
    ptxkit_kernel *rows = NULL, *columns = NULL;
    ptxkit_stream *stream = NULL;
    ptxkit_dptr d_input = 0, d_buffer = 0, d_output = 0;
    int status = 0;
    if (!image || !result) return failed("host memory", PTXKIT_ERROR_OUT_OF_MEMORY);
    for (size_t i = 0; i < n; i++) image[i] = random_unit() * 16.0f;

    ptxkit_status st = ptxkit_program_create("convolutionSeparable.cu", convolution_source, NULL, 0, &program);
    /* one compile, one module: both kernels and the filter they share */
    const char *names[] = {"convolutionRowsKernel", "convolutionColumnsKernel", "&c_Kernel"};
    if (st == PTXKIT_SUCCESS) st = ptxkit_program_module_get(ctx, program, names, 3, NULL, 0, &module);
    if (st == PTXKIT_ERROR_NO_NVRTC) {
        printf("skipped: %s\n", ptxkit_last_error());
        return 77;
    }
    if (st == PTXKIT_SUCCESS) st = ptxkit_module_kernel_get(module, "convolutionRowsKernel", &rows);
    if (st == PTXKIT_SUCCESS) st = ptxkit_module_kernel_get(module, "convolutionColumnsKernel", &columns);
    if (st != PTXKIT_SUCCESS) return failed("building the module", st);
    size_t filter_bytes = 0;
    st = ptxkit_module_variable_get(module, "&c_Kernel", NULL, &filter_bytes);
    if (st != PTXKIT_SUCCESS || filter_bytes != sizeof filter)
        return failed("the filter's size", st ? st : PTXKIT_ERROR_INVALID_ARGUMENT);

    st = ptxkit_memory_alloc(ctx, bytes, &d_input);
    if (st == PTXKIT_SUCCESS) st = ptxkit_memory_alloc(ctx, bytes, &d_buffer);
    if (st == PTXKIT_SUCCESS) st = ptxkit_memory_alloc(ctx, bytes, &d_output);
    if (st == PTXKIT_SUCCESS) st = ptxkit_stream_create(ctx, PTXKIT_STREAM_NON_BLOCKING, 0, &stream);
    if (st == PTXKIT_SUCCESS) st = ptxkit_memory_write(ctx, d_input, image, bytes);
    if (st != PTXKIT_SUCCESS) return failed("setup", st);

    int pitch = w;
    void *rows_args[] = {&d_buffer, &d_input, (void *)&w, (void *)&h, &pitch};
    void *columns_args[] = {&d_output, &d_buffer, (void *)&w, (void *)&h, &pitch};
    const ptxkit_dim3 rows_grid = {(unsigned)(w / ROWS_X), (unsigned)(h / ROWS_Y), 1}, rows_block = {16, ROWS_Y, 1};
    const ptxkit_dim3 columns_grid = {(unsigned)(w / COLUMNS_X), (unsigned)(h / COLUMNS_Y), 1}, columns_block = {16, 8, 1};
    for (int round = 0; round < 2 && status == 0; round++) {
        for (int i = 0; i < KERNEL_LENGTH; i++) filter[i] = random_unit();
        /* round 0: the sample's cudaMemcpyToSymbol; round 1: ordered on a stream with the kernels */
        ptxkit_stream *s = round ? stream : NULL;
        st = round ? ptxkit_module_variable_write_async(module, "&c_Kernel", 0, filter, sizeof filter, s)
                   : ptxkit_module_variable_write(module, "&c_Kernel", 0, filter, sizeof filter);
        if (st == PTXKIT_SUCCESS) st = ptxkit_memory_set8_async(ctx, d_output, 0xff, bytes, s); /* poison: NaN */
        if (st == PTXKIT_SUCCESS) st = ptxkit_kernel_launch(rows, rows_grid, rows_block, 0, s, rows_args);
        if (st == PTXKIT_SUCCESS) st = ptxkit_kernel_launch(columns, columns_grid, columns_block, 0, s, columns_args);
        if (st == PTXKIT_SUCCESS) st = ptxkit_stream_synchronize(ctx, s);
        if (st == PTXKIT_SUCCESS) st = ptxkit_memory_read(ctx, result, d_output, bytes);
        if (st != PTXKIT_SUCCESS) return failed("filtering", st);
        /* the filter the kernels read is the one written */
        float back[KERNEL_LENGTH];
        st = ptxkit_module_variable_read(module, "&c_Kernel", 0, back, sizeof back);
        if (st != PTXKIT_SUCCESS) return failed("reading the filter back", st);
        for (int i = 0; i < KERNEL_LENGTH; i++)
            if (back[i] != filter[i]) status = 1;
        double error = filter_error(result, image, filter, w, h);
        printf("%s filter, %d x %d image: relative L2 error %.3g%s\n", round ? "stream-written" : "synchronous", w, h,
               error, error < 1e-6 ? "" : " (too large)");
        if (!(error < 1e-6)) status = 1;
    }
    ptxkit_stream_destroy(stream);
    ptxkit_memory_free(ctx, d_input);
    ptxkit_memory_free(ctx, d_buffer);
    ptxkit_memory_free(ctx, d_output);
    ptxkit_program_destroy(program);
    ptxkit_context_destroy(ctx);
    free(image);
    free(result);
    printf("%s\n", status ? "FAILED" : "ok");
    return status;
}
