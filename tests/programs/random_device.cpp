// C++'s std::random_device, which libstdc++ serves from rdseed or rdrand
// where the CPU has them (no syscall at all): replay must print exactly
// what the recording printed.
#include <cstdio>
#include <random>

int main()
{
    std::random_device device;
    std::mt19937 engine(device());
    std::uniform_int_distribution<int> die(1, 6);
    std::printf("random_device: %s, entropy %.1f\n", device.entropy() > 0 ? "hardware or kernel" : "unknown",
                device.entropy());
    std::printf("%u %u\n", device(), device());
    for (int i = 0; i < 10; i++)
        std::printf("%d ", die(engine));
    std::printf("\n");
}
