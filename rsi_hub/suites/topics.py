"""Subject-matter banks for the generator: topics, products, how-tos, audiences and names.

Every subject bank (topics, products, how-tos, events) is split between the suites (see
`for_group`) so that the held-out suites and the generation pool never share a subject: a
synthetic training prompt about "urban beekeeping" can never be a light rewrite of a held-out
prompt about it. Recipients, audiences, characters,
occasions, names and places are slot fillers and are shared by all groups.
"""

from __future__ import annotations

import hashlib
from functools import cache

# Which group gets each of 20 slots; items are ordered by SHA-256 and dealt round this pattern,
# so the split is stable, balanced (20 / 10 / 25 / 45 %) and independent of the bank's order.
GROUP_PATTERN: tuple[str, ...] = (
    "if818", "pool", "if3k", "pool", "if263", "pool", "if3k", "if818", "pool", "if3k",
    "pool", "if818", "pool", "if3k", "if263", "pool", "if818", "if3k", "pool", "pool",
)  # fmt: skip
GROUPS: tuple[str, ...] = ("if818", "if263", "if3k", "pool")


def _lines(block: str) -> tuple[str, ...]:
    return tuple(line.strip() for line in block.strip().splitlines() if line.strip())


TOPICS = _lines("""
urban beekeeping
composting at home
rooftop gardens
growing tomatoes on a balcony
saving seeds from your vegetable patch
native wildflowers for pollinators
keeping houseplants alive in winter
rainwater harvesting
planting trees in cities
community allotments
remote work
four-day work weeks
onboarding new employees
running better meetings
giving constructive feedback
asking for a raise
switching careers at forty
freelancing as a graphic designer
building a professional portfolio
networking for introverts
time management for students
studying for final exams
learning a second language as an adult
taking notes by hand
reading more books each year
starting a book club
public libraries in the digital age
homeschooling on a budget
choosing a university major
student loans
first-time home buying
renting your first apartment
budgeting for a family of four
emergency savings funds
paying off credit card debt
investing in index funds
retirement planning in your twenties
splitting bills with roommates
tipping etiquette abroad
buying a used car
electric cars
bicycle commuting
public transit in small towns
carpooling to work
high-speed rail
night trains in Europe
traveling with a toddler
solo travel for beginners
packing light for a long trip
visiting national parks
camping in the rain
planning a road trip
staying healthy on long flights
learning to surf
marathon training
starting to run after an injury
yoga for office workers
strength training for seniors
stretching before bed
swimming as exercise
hiking with a dog
rock climbing gyms
cycling in winter
team sports for children
youth soccer coaching
chess for beginners
learning the guitar
playing piano as an adult
joining a community choir
film photography
street photography ethics
painting with watercolors
pottery classes
knitting your first scarf
woodworking safety
repairing old furniture
restoring vintage radios
building a birdhouse
model railways
birdwatching
stargazing in the city
amateur astronomy
the phases of the moon
solar eclipses
the life cycle of stars
exploring Mars
space tourism
satellites and weather forecasts
how rainbows form
why the sky is blue
ocean tides
coral reefs
plastic pollution in the ocean
sustainable fishing
protecting wetlands
bird migration
monarch butterflies
wolves returning to forests
urban foxes
the water cycle
earthquakes and building safety
volcano monitoring
wildfire preparedness
flood insurance
heat waves in cities
recycling electronics
repair cafes
secondhand clothing
fast fashion
capsule wardrobes
mending clothes
minimalist living
decluttering a garage
organizing a small kitchen
meal prepping for the week
baking sourdough bread
fermenting vegetables
making fresh pasta
cooking with cast iron
plant-based breakfasts
reducing food waste
school lunch programs
farmers markets
the history of coffee
brewing tea properly
chocolate making
street food markets
hosting a dinner party
cooking for picky eaters
kitchen knife skills
spices from around the world
the Mediterranean diet
drinking enough water
sleep hygiene
afternoon naps
screen time for teenagers
digital detox weekends
social media and self-esteem
online privacy for families
password managers
two-factor authentication
phishing emails
backing up your photos
cloud storage
learning to code at fifty
open source software
building a personal website
accessibility on the web
video game design
esports tournaments
board game nights
escape rooms
podcasting for beginners
starting a newsletter
local journalism
fact-checking news online
public speaking nerves
writing a memoir
keeping a daily journal
poetry slams
improv theater
community theater auditions
museum visits with kids
the history of the printing press
ancient Roman roads
the Silk Road
medieval castles
lighthouses
the invention of the telephone
early aviation
the first computers
the history of jazz
vinyl records
classical music for beginners
street art
architecture of train stations
tiny houses
passive house design
heat pumps
solar panels for homes
wind farms
energy-efficient lighting
insulating an old house
smart thermostats
home security on vacation
moving to a new city
making friends as an adult
volunteering at a food bank
neighborhood cleanup days
community gardens
local elections
jury duty
paying taxes on time
small business bookkeeping
opening a bakery
running a food truck
selling crafts online
customer service on social media
writing a business plan
crowdfunding a product
product returns
loyalty programs
coworking spaces
office plants
standing desks
ergonomic chairs
commuting by scooter
airport security lines
lost luggage
hotel breakfast buffets
vacation rentals
learning to drive
parallel parking
road trip snacks
caring for an elderly parent
grandparents and technology
adopting a rescue dog
training a puppy
cats and indoor enrichment
keeping backyard chickens
aquarium care
horse riding lessons
visiting a zoo responsibly
pet insurance
first aid basics
learning CPR
flu season
handwashing habits
seasonal allergies
dental checkups
eye strain from screens
mindfulness at work
gratitude journaling
managing stress before a deadline
morning routines
evening walks
daylight saving time
winter blues
celebrating small wins
setting New Year resolutions
saying no politely
apologizing sincerely
writing thank-you notes
wedding speeches
planning a surprise party
birthday traditions
holiday gift budgets
hosting overnight guests
moving in with a partner
sibling rivalry
bedtime stories
teaching kids about money
allowances for children
school uniforms
homework policies
field trips
science fairs
robotics clubs
spelling bees
after-school programs
summer camps
gap years
studying abroad
internships
job interviews over video
writing a resume
cover letters
workplace mentoring
hybrid offices
company culture
employee wellness programs
team-building retreats
conference travel
trade shows
supply chains
warehouse robots
drone deliveries
3D printing at home
self-driving trucks
artificial intelligence in hospitals
telemedicine
wearable fitness trackers
sleep tracking apps
language learning apps
e-readers versus paper books
audiobooks
online courses
virtual reality classrooms
the metric system
time zones
calendars around the world
the history of chess
origami
calligraphy
the art of letter writing
postcards
stamp collecting
coin collecting
thrift store treasure hunting
garage sales
bartering with neighbors
tool libraries
car sharing
bike repair basics
changing a flat tire
winter car maintenance
snow shoveling safety
autumn leaf cleanup
spring cleaning
painting a room
choosing paint colors
hanging shelves
fixing a leaky faucet
unclogging a drain
building a compost bin
raised garden beds
pruning fruit trees
lawn alternatives
xeriscaping
pond ecosystems
mushroom foraging safety
herbal teas
growing herbs indoors
microgreens
""")

PRODUCTS = _lines("""
a stainless steel water bottle
a solar-powered phone charger
a foldable electric bike
a noise-cancelling headset
a cast iron skillet
a bamboo cutting board
a smart plant sensor
a weekly planner notebook
a waterproof hiking backpack
a wool winter hat
a handmade ceramic mug
a compact espresso machine
a reusable beeswax food wrap
a standing desk converter
a mechanical keyboard
a portable camping stove
a children's science kit
a memory foam pillow
a cordless vacuum cleaner
a board game about trains
a language learning app
a meal kit subscription
a rechargeable bike light
a digital kitchen scale
a silk sleep mask
a recycled plastic rain jacket
a smart doorbell
a sourdough starter kit
a pocket-sized projector
a dog puzzle feeder
a pair of trail running shoes
a cold brew coffee maker
a gardening tool set
a set of watercolor paints
a travel pillow
an air purifier
an electric kettle
an e-reader with a warm light
a kids' balance bike
a yoga mat made of cork
a wireless meat thermometer
a laundry drying rack
a beginner ukulele
a telescope for children
a desk lamp with a timer
a herb growing kit
a weighted blanket
a leather wallet
a pair of reading glasses
a lunch box with compartments
a fitness resistance band set
a soy wax candle
a first aid kit for hikers
a portable power bank
a smart water filter pitcher
a wooden toy train set
a photo printing service
a cat water fountain
an insulated lunch bag
a picnic blanket
a pour-over coffee set
a rain barrel
a bird feeder camera
a budgeting spreadsheet template
a home weather station
a pair of wool socks
a neck pillow for desk workers
a sleep sound machine
a bread maker
a pasta drying rack
a travel adapter
a tent for two people
a kayak paddle
a jigsaw puzzle of a city map
a fountain pen
a reusable notebook
a slow cooker
a baby carrier
a pet grooming brush
a shower water timer
""")

HOWTOS = _lines("""
repotting a houseplant
brewing pour-over coffee
changing a bicycle tire
setting up a home Wi-Fi router
making a weekly budget
packing a carry-on bag
cleaning a cast iron pan
writing a polite complaint email
planting spring bulbs
hanging a picture frame
preparing for a job interview
folding a fitted sheet
starting a vegetable garden
making a simple stir-fry
backing up a laptop
training a dog to sit
ironing a dress shirt
sharpening a kitchen knife
assembling a flat-pack bookshelf
organizing a closet
painting a fence
making cold brew at home
tying a tie
jump-starting a car
setting up a fish tank
learning to juggle
writing a haiku
making a paper airplane
cleaning a laptop keyboard
descaling a kettle
caring for a cactus
preparing a tax folder
planning a picnic
making homemade granola
sewing on a button
fixing a squeaky door
building a campfire safely
checking tire pressure
wrapping a gift neatly
cleaning windows without streaks
making a family tree
starting a podcast
creating a strong password
replacing a light switch cover
baking banana bread
setting up a bird feeder
waxing a snowboard
cleaning running shoes
making a cup of masala chai
preparing a rental deposit return
""")

RECIPIENTS = _lines("""
your team
your manager
a new client
the school principal
your landlord
the parents of a youth soccer team
your neighbors
a group of volunteers
the city council
a hiring manager
your book club
the hotel front desk
a customer who received a damaged order
new employees
your professor
the members of a hiking club
a local newspaper editor
your building's residents
a supplier who missed a deadline
the organizers of a conference
your grandmother
an old friend
a prospective tenant
the library staff
event sponsors
your coworkers
your students
a community garden committee
a potential investor
the parent-teacher association
""")

AUDIENCES = _lines("""
a ten-year-old
a group of high school students
first-year university students
busy parents
retirees
small business owners
complete beginners
new managers
nurses on night shifts
software developers
tourists visiting for the first time
people who have never cooked
a skeptical friend
teenagers
grandparents
office workers
college athletes
new homeowners
volunteers
shop owners
""")

OCCASIONS = _lines("""
a colleague's retirement
a best friend's wedding
a sister's graduation
a team's product launch
a grandparent's ninetieth birthday
the opening of a community garden
a farewell dinner for a neighbor
the end of a charity fun run
a company's tenth anniversary
a volunteer appreciation night
a school reunion
a housewarming party
a coach's last season
a bakery's first year in business
a library's reopening
""")

EVENTS = _lines("""
a weekend farmers market
a free coding workshop
a neighborhood cleanup day
a charity bake sale
a summer reading challenge
an open-mic night
a new bike lane
a pop-up art exhibition
a blood donation drive
a family movie night in the park
a repair cafe
a seed swap
a late-night museum tour
a community choir concert
a job fair for students
a photography walk
a plant sale
a chess tournament
a used book fair
a beach cleanup
a science fair
a 5K fun run
a winter coat drive
a cooking class for kids
a stargazing evening
""")

CHARACTERS = _lines("""
a retired lighthouse keeper
a shy baker
a curious robot
a lost cat
a young astronaut
a grumpy mail carrier
a street musician
a night-shift nurse
a clumsy wizard
a lonely gardener
a talkative parrot
a determined marathon runner
a new student
a traveling bookseller
a forgetful inventor
a brave firefighter
a village librarian
a fox in the city
a chess prodigy
a bus driver on her last route
""")

NAMES = _lines("""
Maria
James
Aisha
Tomas
Priya
Chen
Lena
Omar
Sofia
Daniel
Yuki
Fatima
Noah
Elena
Kwame
Isabel
Marco
Hannah
Ravi
Grace
Lucas
Amara
Oliver
Nadia
Diego
Ingrid
Samuel
Leila
Victor
Rosa
""")

CITIES = _lines("""
Lisbon
Denver
Nairobi
Osaka
Toronto
Melbourne
Austin
Glasgow
Porto
Seattle
Bogota
Kraków
Dublin
Tucson
Wellington
Valencia
Accra
Minneapolis
Hamburg
Halifax
""")

ORGS = _lines("""
a small design studio
a neighborhood bakery
a regional hospital
a public library
a family-run hardware store
a local bike shop
an animal shelter
a startup that makes solar chargers
a community college
a city museum
a youth sports league
an independent bookstore
a coworking space
a food bank
a dental clinic
""")


def _rank(item: str) -> str:
    return hashlib.sha256(item.encode("utf-8")).hexdigest()


@cache
def for_group(bank: tuple[str, ...], group: str) -> tuple[str, ...]:
    """The part of `bank` that belongs to one suite group (if818, if263, if3k or pool)."""
    if group not in GROUPS:
        raise ValueError(f"unknown group {group!r}; expected one of {GROUPS}")
    ordered = sorted(bank, key=_rank)
    return tuple(
        item
        for position, item in enumerate(ordered)
        if GROUP_PATTERN[position % len(GROUP_PATTERN)] == group
    )
