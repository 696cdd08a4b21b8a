/* getrandom(2): 32 bytes printed in hex. */
#include <stdio.h>
#include <sys/random.h>

int main(void)
{
    unsigned char buf[32];
    if (getrandom(buf, sizeof buf, 0) != sizeof buf)
        return 1;
    for (size_t i = 0; i < sizeof buf; i++)
        printf("%02x", buf[i]);
    printf("\n");
    return 0;
}
